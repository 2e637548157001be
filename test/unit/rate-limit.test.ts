import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createRateLimiter, rateLimitHeaders, type RateLimiter } from '../../src/pipeline/rate-limit.js';
import type { RateLimitConfig } from '../../src/config/types.js';

/** What the server does per request: check, and count only when admitted. */
function request(limiter: RateLimiter, config: RateLimitConfig | undefined, now: number) {
  const decision = limiter.check(config, now);
  if (!decision) return { admitted: true, decision, after: limiter.record(now) };
  if (!decision.admitted) return { admitted: false, decision, after: undefined };
  return { admitted: true, decision, after: limiter.record(now) };
}

const perMinute = (requests: number): RateLimitConfig => ({ requests, windowMs: 60_000 });

describe('createRateLimiter', () => {
  it('does nothing without a configured rate limit', () => {
    const limiter = createRateLimiter();
    expect(limiter.admits(undefined, 0)).toBe(true);
    expect(limiter.check(undefined, 0)).toBeUndefined();
    expect(limiter.record(0)).toBeUndefined();
  });

  it('admits `requests` requests, then refuses with the headers of SPEC §5.2', () => {
    const limiter = createRateLimiter();
    const config = { requests: 3, windowMs: 10_000 };
    expect(limiter.check(config, 0)).toEqual({
      admitted: true,
      limit: 3,
      remaining: 3,
      resetSeconds: 0,
      retryAfterSeconds: 0,
    });
    expect(limiter.record(0)).toEqual({ limit: 3, remaining: 2, resetSeconds: 10 });
    expect(request(limiter, config, 2_500).after).toEqual({ limit: 3, remaining: 1, resetSeconds: 8 });
    expect(request(limiter, config, 5_000).after).toEqual({ limit: 3, remaining: 0, resetSeconds: 5 });
    expect(limiter.check(config, 5_000)).toEqual({
      admitted: false,
      limit: 3,
      remaining: 0,
      resetSeconds: 5,
      retryAfterSeconds: 5,
    });
  });

  it('check() counts nothing: a refused or quota-refused request leaves the window as it was', () => {
    const limiter = createRateLimiter();
    const config = { requests: 1, windowMs: 1_000 };
    for (let i = 0; i < 10; i++) expect(limiter.check(config, 0)?.remaining).toBe(1);
    limiter.record(0);
    for (let i = 0; i < 10; i++) expect(limiter.check(config, 999)?.admitted).toBe(false);
    expect(limiter.check(config, 1_000)?.admitted).toBe(true);
  });

  it('is a sliding window: a request at exactly t0 + window is admitted, 1 ms before it is not', () => {
    const limiter = createRateLimiter();
    const config = { requests: 2, windowMs: 1_000 };
    request(limiter, config, 5_000);
    request(limiter, config, 5_600);
    expect(limiter.check(config, 5_999)?.admitted).toBe(false);
    expect(request(limiter, config, 6_000).admitted).toBe(true);
    // Only the request at 5 000 left; the one at 5 600 still counts: not a fixed window.
    expect(limiter.check(config, 6_000)?.admitted).toBe(false);
    expect(limiter.check(config, 6_599)?.admitted).toBe(false);
    expect(limiter.check(config, 6_600)).toMatchObject({ admitted: true, remaining: 1 });
  });

  it('does not reset at a fixed window boundary', () => {
    const limiter = createRateLimiter();
    const config = perMinute(100);
    for (let i = 0; i < 100; i++) request(limiter, config, 59_000);
    // A fixed one-minute window would start afresh at 60 000.
    expect(limiter.check(config, 60_000)).toMatchObject({ admitted: false, retryAfterSeconds: 59 });
    expect(limiter.check(config, 118_999)?.admitted).toBe(false);
    expect(limiter.check(config, 119_000)).toMatchObject({ admitted: true, remaining: 100 });
  });

  it('admits exactly `requests` of a burst in one tick', () => {
    const limiter = createRateLimiter();
    const config = perMinute(100);
    let admitted = 0;
    for (let i = 0; i < 400; i++) if (request(limiter, config, 1_000).admitted) admitted++;
    expect(admitted).toBe(100);
  });

  it.each([
    { left: 60_000, retryAfter: 60 },
    { left: 2_000, retryAfter: 2 },
    { left: 1_200, retryAfter: 2 },
    { left: 1_000, retryAfter: 1 },
    { left: 999, retryAfter: 1 },
    { left: 1, retryAfter: 1 },
    { left: 0.001, retryAfter: 1 },
  ])(
    'Retry-After is $retryAfter s when $left ms are left (whole seconds, rounded up, at least 1)',
    ({ left, retryAfter }) => {
      const limiter = createRateLimiter();
      const config = perMinute(1);
      request(limiter, config, 0);
      expect(limiter.check(config, 60_000 - left)).toMatchObject({
        admitted: false,
        retryAfterSeconds: retryAfter,
        resetSeconds: retryAfter,
      });
    },
  );

  it('a window under a second still gives Retry-After 1 and Reset 1', () => {
    const limiter = createRateLimiter();
    const config = { requests: 1, windowMs: 250 };
    expect(request(limiter, config, 0).after).toEqual({ limit: 1, remaining: 0, resetSeconds: 1 });
    expect(limiter.check(config, 100)).toMatchObject({ admitted: false, retryAfterSeconds: 1 });
    expect(limiter.check(config, 250)?.admitted).toBe(true);
  });

  it('record() refuses to count past the limit', () => {
    const limiter = createRateLimiter();
    const config = perMinute(1);
    request(limiter, config, 0);
    expect(() => limiter.record(1)).toThrow(/window is full/);
  });

  it('treats a clock that steps back as standing still', () => {
    const limiter = createRateLimiter();
    const config = { requests: 1, windowMs: 1_000 };
    request(limiter, config, 10_000);
    expect(limiter.check(config, 2_000)).toMatchObject({ admitted: false, retryAfterSeconds: 1 });
    expect(limiter.check(config, 11_000)?.admitted).toBe(true);
  });

  describe('reloads keep what was counted', () => {
    it('a lower `requests` keeps every counted time; a slot frees when enough of them left', () => {
      const limiter = createRateLimiter();
      const five = { requests: 5, windowMs: 1_000 };
      for (const t of [0, 100, 200, 300, 400]) expect(request(limiter, five, t).admitted).toBe(true);
      const three = { requests: 3, windowMs: 1_000 };
      // 5 counted, limit 3: the 3rd oldest (t=200) must leave before a slot frees, at 1 200.
      expect(limiter.check(three, 500)).toEqual({
        admitted: false,
        limit: 3,
        remaining: 0,
        resetSeconds: 1,
        retryAfterSeconds: 1,
      });
      expect(limiter.check(three, 1_199)?.admitted).toBe(false);
      expect(limiter.check(three, 1_200)).toMatchObject({ admitted: true, remaining: 1 });
    });

    it('a higher `requests` grows the ring and keeps the counted times', () => {
      const limiter = createRateLimiter();
      const two = { requests: 2, windowMs: 1_000 };
      request(limiter, two, 0);
      request(limiter, two, 10);
      const four = { requests: 4, windowMs: 1_000 };
      expect(limiter.check(four, 20)).toMatchObject({ admitted: true, limit: 4, remaining: 2 });
      expect(request(limiter, four, 20).after).toEqual({ limit: 4, remaining: 1, resetSeconds: 1 });
      request(limiter, four, 30);
      expect(limiter.check(four, 40)?.admitted).toBe(false);
      expect(limiter.check(four, 1_000)).toMatchObject({ admitted: true, remaining: 1 });
    });

    it('lowering then raising `requests` within one window forgets nothing', () => {
      const limiter = createRateLimiter();
      const four = { requests: 4, windowMs: 1_000 };
      for (let i = 0; i < 4; i++) request(limiter, four, 0);
      expect(limiter.check({ requests: 2, windowMs: 1_000 }, 1)?.admitted).toBe(false);
      expect(limiter.check(four, 2)).toMatchObject({ admitted: false, remaining: 0 });
    });

    it('a new window applies to the counted times at once, longer or shorter', () => {
      const limiter = createRateLimiter();
      request(limiter, { requests: 1, windowMs: 1_000 }, 0);
      expect(limiter.check({ requests: 1, windowMs: 500 }, 600)?.admitted).toBe(true);
      // The request at 0 left a 500 ms window, but a 2 s window takes it back in.
      expect(limiter.check({ requests: 1, windowMs: 2_000 }, 600)).toMatchObject({
        admitted: false,
        retryAfterSeconds: 2,
      });
    });

    it('removing the rate limit forgets the counts; adding it back starts empty', () => {
      const limiter = createRateLimiter();
      const config = perMinute(1);
      request(limiter, config, 0);
      expect(limiter.check(undefined, 1)).toBeUndefined();
      expect(limiter.check(config, 2)).toMatchObject({ admitted: true, remaining: 1 });
    });
  });

  it('handles 100 000 requests at distinct times in one window', () => {
    const limiter = createRateLimiter();
    const config = { requests: 100_000, windowMs: 3_600_000 };
    let admitted = 0;
    for (let i = 0; i < 100_001; i++) if (request(limiter, config, i).admitted) admitted++;
    expect(admitted).toBe(100_000);
    expect(limiter.check(config, 3_600_000)).toMatchObject({ admitted: true, remaining: 1 });
  });

  // The documented behaviour: the limiter counts every admission inside the current window, also
  // those made before a reload; the model below is a plain array of every admission.
  it('matches a model of every admission, across bursts and reloads', () => {
    const step = fc.record({
      dt: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 3_000 })),
      burst: fc.integer({ min: 1, max: 8 }),
      config: fc.option(
        fc.record({ requests: fc.integer({ min: 1, max: 6 }), windowMs: fc.integer({ min: 0, max: 2_000 }) }),
        {
          freq: 4,
        },
      ),
    });
    fc.assert(
      fc.property(
        fc.array(step, { maxLength: 60 }),
        fc.record({ requests: fc.integer({ min: 1, max: 6 }), windowMs: fc.integer({ min: 1, max: 2_000 }) }),
        (steps, initial) => {
          const limiter = createRateLimiter();
          let config = initial;
          const admittedTimes: number[] = [];
          let t = 0;
          for (const s of steps) {
            t += s.dt;
            if (s.config) config = s.config;
            for (let i = 0; i < s.burst; i++) {
              const counted = admittedTimes.filter((a) => a > t - config.windowMs);
              const expectAdmitted = counted.length < config.requests;
              expect(limiter.admits(config, t)).toBe(expectAdmitted);
              const decision = limiter.check(config, t);
              expect(decision?.admitted).toBe(expectAdmitted);
              expect(decision?.remaining).toBe(Math.max(0, config.requests - counted.length));
              if (!expectAdmitted) {
                const frees = counted[counted.length - config.requests]! + config.windowMs;
                expect(decision?.retryAfterSeconds).toBe(Math.max(1, Math.ceil((frees - t) / 1000)));
                continue;
              }
              expect(limiter.record(t)?.remaining).toBe(config.requests - counted.length - 1);
              admittedTimes.push(t);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never admits more than `requests` in any window of a fixed config', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 1_000 }),
        fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 200 }),
        (requests, windowMs, gaps) => {
          const limiter = createRateLimiter();
          const config = { requests, windowMs };
          const admitted: number[] = [];
          let t = 0;
          for (const gap of gaps) {
            t += gap;
            if (request(limiter, config, t).admitted) admitted.push(t);
          }
          for (let i = 0; i + requests < admitted.length; i++) {
            // The request `requests` places later must be a full window after this one.
            expect(admitted[i + requests]! - admitted[i]!).toBeGreaterThanOrEqual(windowMs);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('rateLimitHeaders', () => {
  it('lists the RateLimit-* headers, and Retry-After for a refusal', () => {
    expect(rateLimitHeaders({ limit: 100, remaining: 7, resetSeconds: 12 })).toEqual([
      'RateLimit-Limit',
      '100',
      'RateLimit-Remaining',
      '7',
      'RateLimit-Reset',
      '12',
    ]);
    expect(rateLimitHeaders({ limit: 1, remaining: 0, resetSeconds: 3 }, 3)).toEqual([
      'RateLimit-Limit',
      '1',
      'RateLimit-Remaining',
      '0',
      'RateLimit-Reset',
      '3',
      'Retry-After',
      '3',
    ]);
  });
});
