import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { MAX_DURATION_MS, MAX_SIZE_BYTES, parseDuration, parseFailRate, parseSize } from '../../src/config/units.js';

describe('parseDuration', () => {
  test.each<[unknown, number | undefined]>([
    [0, 0],
    [250, 250],
    [MAX_DURATION_MS, MAX_DURATION_MS],
    ['250ms', 250],
    ['0ms', 0],
    ['0s', 0],
    ['2s', 2000],
    ['1m', 60_000],
    ['1h', 3_600_000],
    ['1.5s', 1500],
    ['1.1s', 1100],
    ['0.5m', 30_000],
    ['0.25h', 900_000],
    ['1.000s', 1000],
    ['007s', 7000],
    ['596h', 2_145_600_000],
    // refused
    [MAX_DURATION_MS + 1, undefined],
    ['597h', undefined], // more than 2^31 - 1 ms
    ['1.5ms', undefined], // not a whole millisecond
    ['0.0001s', undefined],
    [-1, undefined],
    [1.5, undefined],
    [Number.NaN, undefined],
    [Number.POSITIVE_INFINITY, undefined],
    ['250', undefined], // a string needs a unit
    ['', undefined],
    ['ms', undefined],
    ['.5s', undefined],
    ['5.s', undefined],
    ['-5s', undefined],
    ['+5s', undefined],
    ['5 s', undefined],
    [' 5s', undefined],
    ['5S', undefined], // units are lower case: M would be ambiguous
    ['5sec', undefined],
    ['5d', undefined],
    ['1e3ms', undefined],
    [`${'9'.repeat(80)}ms`, undefined],
    [`1.${'0'.repeat(40)}1s`, undefined],
    [true, undefined],
    [null, undefined],
    [undefined, undefined],
    [[1], undefined],
    [{ ms: 1 }, undefined],
    [10n, undefined],
  ])('%o → %o', (input, expected) => {
    expect(parseDuration(input)).toBe(expected);
  });
});

describe('parseSize', () => {
  test.each<[unknown, number | undefined]>([
    [0, 0],
    [1024, 1024],
    [MAX_SIZE_BYTES, MAX_SIZE_BYTES],
    ['512b', 512],
    ['1kb', 1024],
    ['512kb', 524_288],
    ['2mb', 2_097_152],
    ['1gb', 1_073_741_824],
    ['1.5kb', 1536],
    ['0.5mb', 524_288],
    ['1KB', 1024],
    ['1Mb', 1_048_576],
    ['1GB', 1_073_741_824],
    ['8388607gb', 8_388_607 * 1024 ** 3],
    // refused
    ['8388608gb', undefined], // beyond Number.MAX_SAFE_INTEGER
    [MAX_SIZE_BYTES + 1, undefined],
    ['0.3kb', undefined], // 307.2 bytes
    ['1.5b', undefined],
    ['1024', undefined], // a string needs a unit
    ['1k', undefined],
    ['1 kb', undefined],
    ['1kib', undefined],
    ['1tb', undefined],
    ['-1kb', undefined],
    [-1, undefined],
    [1.5, undefined],
    [Number.NaN, undefined],
    ['', undefined],
    [false, undefined],
    [null, undefined],
    [{}, undefined],
  ])('%o → %o', (input, expected) => {
    expect(parseSize(input)).toBe(expected);
  });
});

describe('parseFailRate', () => {
  test.each<[unknown, number | undefined]>([
    [0, 0],
    [1, 1],
    [0.25, 0.25],
    [1e-9, 1e-9],
    ['0%', 0],
    ['25%', 0.25],
    ['12.5%', 0.125],
    ['100%', 1],
    ['100.0%', 1],
    // refused
    [1.5, undefined],
    [-0.1, undefined],
    [Number.NaN, undefined],
    [Number.POSITIVE_INFINITY, undefined],
    ['150%', undefined],
    ['100.1%', undefined],
    ['-5%', undefined],
    ['0.25', undefined], // a string must be a percentage
    ['25', undefined],
    ['25 %', undefined],
    ['%', undefined],
    ['.5%', undefined],
    ['', undefined],
    [true, undefined],
    [null, undefined],
    [[0.5], undefined],
  ])('%o → %o', (input, expected) => {
    expect(parseFailRate(input)).toBe(expected);
  });
});

describe('properties', () => {
  const inputs = fc.oneof(
    fc.anything(),
    fc.string(),
    fc.stringMatching(/^[0-9.]{0,25}(ms|s|m|h|b|kb|mb|gb|KB|%|)$/),
    fc.double(),
    fc.integer(),
  );

  test('never throw; return undefined or a value in range', () => {
    fc.assert(
      fc.property(inputs, (v) => {
        const d = parseDuration(v);
        expect(d === undefined || (Number.isSafeInteger(d) && d >= 0 && d <= MAX_DURATION_MS)).toBe(true);
        const s = parseSize(v);
        expect(s === undefined || (Number.isSafeInteger(s) && s >= 0 && s <= MAX_SIZE_BYTES)).toBe(true);
        const f = parseFailRate(v);
        expect(f === undefined || (f >= 0 && f <= 1)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  test('integers with a unit scale exactly', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_DURATION_MS }), (n) => {
        expect(parseDuration(n)).toBe(n);
        expect(parseDuration(`${n}ms`)).toBe(n);
        const seconds = Math.floor(n / 1000);
        expect(parseDuration(`${seconds}s`)).toBe(seconds * 1000);
        expect(parseSize(`${n}kb`)).toBe(n * 1024);
        expect(parseSize(`${n}b`)).toBe(n);
      }),
    );
  });

  test('a decimal duration is accepted exactly when it is a whole number of ms', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 6 }), (mantissa, places) => {
        const text = (mantissa / 10 ** places).toFixed(places);
        const ms = (mantissa * 1000) / 10 ** places; // as seconds
        const expected = Number.isInteger(ms) && ms <= MAX_DURATION_MS ? ms : undefined;
        expect(parseDuration(`${text}s`)).toBe(expected);
      }),
    );
  });

  test('percentages are the number over 100', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100 }), (p) => {
        expect(parseFailRate(`${p}%`)).toBe(p / 100);
      }),
    );
  });
});
