// verify's shortcut for answers of one shape (src/verify/same-shape.ts): when it says "certainly the
// same", the full comparison finds no change — checked on generated pairs, many of them alike.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareShapes } from '../../src/verify/compare.js';
import { compileIgnore } from '../../src/verify/ignore.js';
import { certainlySameShape } from '../../src/verify/same-shape.js';
import { shapeOf } from '../../src/verify/shape.js';

const full = (mock: unknown, upstream: unknown) => {
  const ignore = compileIgnore([]);
  const secret = (name: string) => /secret/i.test(name);
  return compareShapes(shapeOf(mock, ignore, secret), shapeOf(upstream, ignore, secret));
};

// Few names and words, so that generated pairs often share a shape and enum-like values repeat.
const names = fc.constantFrom('id', 'status', 'type', 'name', 'items', 'secret', 'cus_12345678901234', '2026-01-01');
const words = fc.constantFrom('active', 'archived', 'USD', 'Ada Lovelace', 'sku-1', '');
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    words,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    tie('object'),
    tie('array'),
  ),
  object: fc.dictionary(names, tie('value'), { maxKeys: 4 }),
  array: fc.array(tie('value'), { maxLength: 3 }),
})).value;
/** The same value with some strings and numbers changed: often the same shape, sometimes a new enum value. */
const vary = (value: unknown, seed: number): unknown => {
  if (typeof value === 'string') return seed % 3 === 0 ? 'pending' : seed % 3 === 1 ? 'Grace Hopper' : value;
  if (typeof value === 'number') return value + seed;
  if (Array.isArray(value)) return value.map((v, i) => vary(v, seed + i));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v], i) => [k, vary(v, seed * 7 + i)]));
  return value;
};

describe('verify: answers certainly of one shape', () => {
  it('never says "the same" where the full comparison finds a change', () => {
    fc.assert(
      fc.property(json, fc.nat(20), fc.boolean(), (mock, seed, alike) => {
        const upstream = alike ? vary(mock, seed) : vary(JSON.parse(JSON.stringify(mock)) as unknown, seed + 1);
        if (certainlySameShape(mock, upstream)) expect(full(mock, upstream)).toEqual([]);
      }),
      { numRuns: 3000, seed: 46 },
    );
  });

  it('says "the same" for different names and numbers; leaves to the full comparison a new enum value, another field, another length or type', () => {
    expect(
      certainlySameShape(
        { id: 1, name: 'Ada', status: 'active', tags: [{ label: 'a' }] },
        { id: 2, name: 'Grace', status: 'active', tags: [{ label: 'b' }] },
      ),
    ).toBe(true);
    expect(certainlySameShape({ status: 'active' }, { status: 'past_due' })).toBe(false);
    expect(certainlySameShape({ status: 'active' }, { state: 'active' })).toBe(false);
    expect(certainlySameShape({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(certainlySameShape([1, 2], [1])).toBe(false);
    expect(certainlySameShape({ a: 1 }, { a: '1' })).toBe(false);
    expect(certainlySameShape({ a: null }, { a: {} })).toBe(false);
  });
});
