import fc from 'fast-check';
import { expect, test } from 'vitest';
import { isoTime } from '../../src/iso-time.js';

const toIso = (t: number): string => new Date(t).toISOString();

test('writes what Date#toISOString writes, at the edges of a second, a year and what a Date holds', () => {
  for (const t of [
    0, 1, 999, 1000, -1, -999, -1000, -1001, -1.5, -1001.5, 0.4, 1767225600123, 1767225600999.7, 253402300799999,
    253402300800000, -62167219200000, -62167219200001, 8.64e15, -8.64e15,
  ])
    expect(isoTime(t), String(t)).toBe(toIso(t));
});

test('writes what Date#toISOString writes for any time a Date holds, in any order (its cache of the last second never leaks)', () => {
  const time = fc.oneof(
    fc.integer({ min: -8.64e15, max: 8.64e15 }),
    fc.double({ min: -8.64e15, max: 8.64e15, noNaN: true }),
    // Times a second apart or closer, so the cached second is often the one asked for.
    fc.integer({ min: 1767225598000, max: 1767225602000 }),
  );
  fc.assert(
    fc.property(fc.array(time, { minLength: 1, maxLength: 20 }), (times) => {
      for (const t of times) expect(isoTime(t)).toBe(toIso(t));
    }),
    { numRuns: 2000 },
  );
});

test('never throws: NaN is the epoch, a time past what a Date holds is the nearest it holds', () => {
  expect(isoTime(Number.NaN)).toBe(toIso(0));
  expect(isoTime(Infinity)).toBe(toIso(8.64e15));
  expect(isoTime(-9e15)).toBe(toIso(-8.64e15));
});
