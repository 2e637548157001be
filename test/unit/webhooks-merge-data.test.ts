// mergeData (src/webhooks/prepare.ts): an event's data with the fields a trigger or a send gives
// over it. A key named `__proto__` in JSON data is a field like any other: kept, never a prototype.
import { describe, expect, test } from 'vitest';
import { mergeData } from '../../src/webhooks/prepare.js';

describe('mergeData', () => {
  test('merges mappings key by key; lists and values replace', () => {
    expect(mergeData({ a: 1, b: { c: 2, d: [1] } }, { b: { d: [2], e: 3 }, f: null })).toEqual({
      a: 1,
      b: { c: 2, d: [2], e: 3 },
      f: null,
    });
  });

  test('a __proto__ key of JSON data stays a field of the result, and nothing gets a prototype from it', () => {
    const over = JSON.parse('{"__proto__":{"polluted":true},"x":1}') as unknown;
    const merged = mergeData({ x: 0 }, over) as Record<string, unknown>;
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect((merged as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.stringify(merged)).toBe('{"x":1,"__proto__":{"polluted":true}}');
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });
});
