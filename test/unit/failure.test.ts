import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFailureSource, failureDraw } from '../../src/pipeline/failure.js';

const USERS = 'GET /users/:id';
const ORDERS = 'POST /orders';

function sequence(seed: number, key: string, rate: number, length: number): boolean[] {
  const source = createFailureSource(seed);
  return Array.from({ length }, () => source.shouldFail(key, rate));
}

describe('createFailureSource', () => {
  it('never fails at failRate 0 and always fails at 1', () => {
    const source = createFailureSource(7);
    let wrong = 0;
    for (let i = 0; i < 100_000; i++) {
      if (source.shouldFail(USERS, 0)) wrong++;
      if (!source.shouldFail(ORDERS, 1)) wrong++;
    }
    expect(wrong).toBe(0);
  });

  it('treats out-of-range and NaN rates as the nearest bound', () => {
    const source = createFailureSource(7);
    for (let i = 0; i < 1000; i++) {
      expect(source.shouldFail(USERS, -0.5)).toBe(false);
      expect(source.shouldFail(USERS, Number.NaN)).toBe(false);
      expect(source.shouldFail(USERS, 1.5)).toBe(true);
    }
  });

  it('replays the same failures for the same seed in a new source', () => {
    expect(sequence(1234, USERS, 0.3, 500)).toEqual(sequence(1234, USERS, 0.3, 500));
  });

  it('follows failureDraw: request n fails iff its draw is below the rate', () => {
    const source = createFailureSource(99);
    for (let n = 0; n < 1000; n++) {
      expect(source.shouldFail(USERS, 0.25)).toBe(failureDraw(99, USERS, n) < 0.25);
    }
  });

  it("keeps an endpoint's sequence when other endpoints are called in between", () => {
    const alone = sequence(42, USERS, 0.5, 300);
    const source = createFailureSource(42);
    const interleaved: boolean[] = [];
    for (let i = 0; i < 300; i++) {
      for (let j = 0; j < i % 5; j++) source.shouldFail(ORDERS, 0.5);
      if (i % 7 === 0) source.shouldFail('GET /other', 0.9);
      interleaved.push(source.shouldFail(USERS, 0.5));
    }
    expect(interleaved).toEqual(alone);
  });

  it('counts requests even at failRate 0, so a reload that changes the rate does not shift n', () => {
    const source = createFailureSource(5);
    for (let i = 0; i < 10; i++) source.shouldFail(USERS, 0);
    const after = Array.from({ length: 50 }, () => source.shouldFail(USERS, 0.5));
    const expected = Array.from({ length: 50 }, (_, i) => failureDraw(5, USERS, 10 + i) < 0.5);
    expect(after).toEqual(expected);
  });

  it('gives different seeds different sequences', () => {
    const a = sequence(1, USERS, 0.5, 200);
    const b = sequence(2, USERS, 0.5, 200);
    expect(a).not.toEqual(b);
    const agreement = a.filter((fail, i) => fail === b[i]).length / a.length;
    expect(agreement).toBeGreaterThan(0.35);
    expect(agreement).toBeLessThan(0.65);
  });

  it('gives different endpoints different sequences under one seed', () => {
    expect(sequence(3, USERS, 0.5, 200)).not.toEqual(sequence(3, 'GET /users/:ID', 0.5, 200));
    expect(sequence(3, USERS, 0.5, 200)).not.toEqual(sequence(3, ORDERS, 0.5, 200));
  });

  it.each([0.01, 0.1, 0.25, 0.5, 0.9, 0.999])('fails at about rate %s over 100k requests', (rate) => {
    const source = createFailureSource(2024);
    let failures = 0;
    const draws = 100_000;
    for (let i = 0; i < draws; i++) if (source.shouldFail(USERS, rate)) failures++;
    // 5 standard deviations of a binomial: a correct generator essentially never exceeds this.
    const tolerance = 5 * Math.sqrt(rate * (1 - rate) * draws);
    expect(Math.abs(failures - rate * draws)).toBeLessThan(tolerance);
  });

  it('spreads draws evenly over [0, 1) (chi-square over 20 buckets)', () => {
    const buckets = new Array<number>(20).fill(0);
    const draws = 100_000;
    let outOfRange = 0;
    for (let n = 0; n < draws; n++) {
      const u = failureDraw(11, ORDERS, n);
      if (!(u >= 0 && u < 1)) outOfRange++;
      else buckets[Math.floor(u * 20)]!++;
    }
    expect(outOfRange).toBe(0);
    const expected = draws / 20;
    const chi2 = buckets.reduce((sum, count) => sum + (count - expected) ** 2 / expected, 0);
    expect(chi2).toBeLessThan(50); // 19 degrees of freedom: p < 0.0002 beyond 50
  });

  it('does not correlate consecutive requests (runs of failures look random)', () => {
    const fails = sequence(8, USERS, 0.5, 100_000);
    let sameAsPrevious = 0;
    for (let i = 1; i < fails.length; i++) if (fails[i] === fails[i - 1]) sameAsPrevious++;
    expect(Math.abs(sameAsPrevious / (fails.length - 1) - 0.5)).toBeLessThan(0.01);
  });

  it('chooses and exposes a random seed when none is given, which replays the same failures', () => {
    const random = createFailureSource();
    expect(Number.isSafeInteger(random.seed)).toBe(true);
    const first = Array.from({ length: 100 }, () => random.shouldFail(USERS, 0.5));
    expect(sequence(random.seed, USERS, 0.5, 100)).toEqual(first);
    expect(createFailureSource(77).seed).toBe(77);
  });

  it('accepts negative and large seeds, and rejects non-finite ones', () => {
    expect(sequence(-1, USERS, 0.5, 100)).toEqual(sequence(-1, USERS, 0.5, 100));
    expect(sequence(-1, USERS, 0.5, 100)).not.toEqual(sequence(1, USERS, 0.5, 100));
    expect(sequence(2 ** 40, USERS, 0.5, 100)).not.toEqual(sequence(0, USERS, 0.5, 100));
    expect(() => createFailureSource(Number.NaN)).toThrow(RangeError);
    expect(() => createFailureSource(Infinity)).toThrow(RangeError);
  });

  it('is deterministic for any seed, key and counter (property)', () => {
    fc.assert(
      fc.property(fc.integer(), fc.string(), fc.nat(2 ** 40), (seed, key, n) => {
        const u = failureDraw(seed, key, n);
        expect(u).toBe(failureDraw(seed, key, n));
        expect(u >= 0 && u < 1).toBe(true);
      }),
    );
  });
});
