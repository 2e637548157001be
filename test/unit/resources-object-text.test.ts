// The text a collection keeps for a new object (objectText) and the random ids made for it
// (randomBase62): the same bytes as the plain joins they replaced, for any fields and any draws.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { objectText } from '../../src/resources/create-operation.js';
import { randomBase62 } from '../../src/expression/functions.js';
import { createAnswerRandom } from '../../src/seeded.js';

/** The join objectText replaced: the fields' text after the id, whatever their keys. */
function joined(id: string | number, fields: Record<string, unknown>): string {
  const rest = JSON.stringify(fields);
  return `{"id":${JSON.stringify(id)}${rest.length > 2 ? `,${rest.slice(1)}` : '}'}`;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('objectText', () => {
  test('the id first, then the fields in their order, as the join wrote it', () => {
    expect(objectText('cus_1', { object: 'customer', metadata: { plan: 'pro' } })).toBe(
      '{"id":"cus_1","object":"customer","metadata":{"plan":"pro"}}',
    );
    expect(objectText(7, {})).toBe('{"id":7}');
  });

  test('fields named like array indexes still come after the id', () => {
    const fields = { name: 'x', '2024': 'leap', '0': 'first' };
    expect(objectText('o_1', fields)).toBe('{"id":"o_1","0":"first","2024":"leap","name":"x"}');
    expect(objectText('o_1', fields)).toBe(joined('o_1', fields));
  });

  test('an own `__proto__` field is written as a field, and no prototype is set', () => {
    const fields = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
    expect(objectText('o_2', fields)).toBe('{"id":"o_2","__proto__":{"polluted":true},"a":1}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('any fields (without an id of their own): the bytes of the join', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.integer()),
        fc.dictionary(fc.string(), fc.jsonValue()).filter((f) => !Object.hasOwn(f, 'id')),
        (id, fields) => objectText(id, fields) === joined(id, fields),
      ),
      { numRuns: 500 },
    );
  });
});

describe('randomBase62', () => {
  test('the characters the one-by-one append drew, for any seed and length', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 1, max: 64 }), (seed, length) => {
        const a = createAnswerRandom(seed, 'resource customers', 1);
        const b = createAnswerRandom(seed, 'resource customers', 1);
        let expected = '';
        for (let i = 0; i < length; i++) expected += BASE62[b.nextUint32() % BASE62.length];
        return randomBase62(a, length) === expected;
      }),
      { numRuns: 300 },
    );
  });
});
