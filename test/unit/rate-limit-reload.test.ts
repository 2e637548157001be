import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createRateLimiter, MAX_RATE_LIMIT_REQUESTS, type RateLimiter } from '../../src/pipeline/rate-limit.js';
import { formatIssue, parseConfig } from '../../src/config/load.js';
import type { RateLimitConfig } from '../../src/config/types.js';
import { MAX_DURATION_MS } from '../../src/config/units.js';

// Issue #12 items 6 and 16: the new limits apply to everything admitted before and after a reload,
// and memory follows the distinct times the window holds, not `requests`.

/** What the server does per request: check, and count only when admitted. */
function tryRequest(limiter: RateLimiter, config: RateLimitConfig, now: number): boolean {
  if (!limiter.admits(config, now)) return false;
  limiter.record(now);
  return true;
}

const HOUR = 3_600_000;

describe('a reload that raises both `requests` and `window` (item 6)', () => {
  it('10 per 1 s, 50 admitted over 5 s, reload to 50 per 1 h: nothing more until the first leaves the hour', () => {
    const limiter = createRateLimiter();
    const tenPerSecond = { requests: 10, windowMs: 1_000 };
    const admitted: number[] = [];
    // A client sending every 10 ms for 5 s: 10 admitted each second.
    for (let t = 0; t < 5_000; t += 10) if (tryRequest(limiter, tenPerSecond, t)) admitted.push(t);
    expect(admitted).toHaveLength(50);
    const firstAt = admitted[0]!;

    const fiftyPerHour = { requests: 50, windowMs: HOUR };
    // 50 were admitted in the last hour: the hour is full until the first of them leaves it.
    expect(limiter.check(fiftyPerHour, 5_400)).toEqual({
      admitted: false,
      limit: 50,
      remaining: 0,
      resetSeconds: Math.ceil((firstAt + HOUR - 5_400) / 1000),
      retryAfterSeconds: 3_595,
    });
    let more = 0;
    for (let t = 5_000; t < firstAt + HOUR; t += 997) if (tryRequest(limiter, fiftyPerHour, t)) more++;
    expect(limiter.admits(fiftyPerHour, firstAt + HOUR - 1)).toBe(false);
    expect(more).toBe(0);
    // Exactly one slot frees when the first leaves, the next when the second does.
    expect(tryRequest(limiter, fiftyPerHour, firstAt + HOUR)).toBe(true);
    expect(limiter.admits(fiftyPerHour, firstAt + HOUR)).toBe(false);
    expect(limiter.admits(fiftyPerHour, admitted[1]! + HOUR)).toBe(true);
  });

  it('a window lengthened again after the old window emptied still counts what it admitted', () => {
    const limiter = createRateLimiter();
    for (let t = 0; t < 3; t++) expect(tryRequest(limiter, { requests: 3, windowMs: 10 }, t)).toBe(true);
    // Long after the 10 ms window emptied (the times left it), a 1 min window takes them back.
    expect(limiter.check({ requests: 3, windowMs: 10 }, 30_000)).toMatchObject({ admitted: true, remaining: 3 });
    expect(limiter.check({ requests: 3, windowMs: 60_000 }, 30_000)).toMatchObject({
      admitted: false,
      remaining: 0,
      resetSeconds: 30,
    });
    expect(limiter.admits({ requests: 3, windowMs: 60_000 }, 60_000)).toBe(true);
  });
});

/** A request, a reload or a step of the clock. */
const action = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant('request' as const), burst: fc.integer({ min: 1, max: 20 }) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('wait' as const),
      ms: fc.oneof(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 3_000 })),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('reload' as const),
      config: fc.record({
        requests: fc.integer({ min: 1, max: 60 }),
        windowMs: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 20_000 })),
      }),
    }),
  },
);
const initialConfig = fc.record({
  requests: fc.integer({ min: 1, max: 10 }),
  windowMs: fc.integer({ min: 1, max: 2_000 }),
});

/** Admissions of the whole run in `(t - windowMs, t]`. */
const inWindow = (admitted: number[], t: number, windowMs: number) =>
  admitted.filter((a) => a > t - windowMs && a <= t).length;

describe('no interval of `window` admits more than `requests`, across reloads', () => {
  it('matches the exact rule: admitted iff fewer than `requests` of all admissions are in the window', () => {
    fc.assert(
      fc.property(initialConfig, fc.array(action, { maxLength: 80 }), (initial, actions) => {
        const limiter = createRateLimiter();
        let config: RateLimitConfig = initial;
        const admitted: number[] = [];
        let t = 0;
        for (const a of actions) {
          if (a.kind === 'wait') t += a.ms;
          else if (a.kind === 'reload') config = a.config;
          else {
            for (let i = 0; i < a.burst; i++) {
              const counted = inWindow(admitted, t, config.windowMs);
              const decision = limiter.check(config, t)!;
              expect(decision.admitted).toBe(counted < config.requests);
              expect(decision.remaining).toBe(Math.max(0, config.requests - counted));
              if (!decision.admitted) {
                // A slot frees when the `requests`-th newest admission leaves the window.
                const frees = admitted[admitted.length - config.requests]! + config.windowMs;
                expect(decision.retryAfterSeconds).toBe(Math.max(1, Math.ceil((frees - t) / 1000)));
                continue;
              }
              limiter.record(t);
              admitted.push(t);
              // The limit holds for the config in force, over what was admitted before any reload too.
              expect(inWindow(admitted, t, config.windowMs)).toBeLessThanOrEqual(config.requests);
            }
          }
        }
      }),
      { numRuns: 400 },
    );
  });

  it('with a tiny precise history: never admits too many, and is exact while no reload lengthens the window', () => {
    fc.assert(
      fc.property(
        initialConfig,
        fc.array(action, { maxLength: 120 }),
        fc.integer({ min: 2, max: 6 }),
        (initial, actions, historySlots) => {
          const limiter = createRateLimiter({ historySlots });
          let config: RateLimitConfig = initial;
          let lengthened = false;
          const admitted: number[] = [];
          let t = 0;
          for (const a of actions) {
            if (a.kind === 'wait')
              t += a.ms + 1; // distinct times, so history needs merging
            else if (a.kind === 'reload') {
              lengthened ||= a.config.windowMs > config.windowMs;
              config = a.config;
            } else {
              for (let i = 0; i < a.burst; i++) {
                const exact = inWindow(admitted, t, config.windowMs) < config.requests;
                const ok = tryRequest(limiter, config, t);
                if (!lengthened) expect(ok).toBe(exact);
                if (ok) {
                  admitted.push(t);
                  expect(inWindow(admitted, t, config.windowMs)).toBeLessThanOrEqual(config.requests);
                }
              }
              expect(limiter.footprint().slots).toBeLessThanOrEqual(2 * historySlots + config.windowMs + 1);
            }
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('a saturated window admits exactly `requests`, at any size', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 1, max: 10 }),
        (requests, windowMs, spread) => {
          const limiter = createRateLimiter();
          const config = { requests, windowMs };
          let admitted = 0;
          // Twice the limit, spread over `spread` ms at the start of the window.
          for (let i = 0; i < 2 * requests; i++)
            if (tryRequest(limiter, config, i % Math.min(spread, windowMs))) admitted++;
          expect(admitted).toBe(requests);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('history', () => {
  it('drops admissions no window can reach (older than 2^31 − 1 ms) rather than merge them into newer slots', () => {
    const limiter = createRateLimiter({ historySlots: 2 });
    const perMs = { requests: 10, windowMs: 1 };
    for (const t of [0, MAX_DURATION_MS + 1, MAX_DURATION_MS + 2, MAX_DURATION_MS + 3, MAX_DURATION_MS + 4])
      expect(tryRequest(limiter, perMs, t)).toBe(true);
    // The longest window holds the 4 latest; the one at 0 must not be counted as one of them.
    expect(limiter.check({ requests: 5, windowMs: MAX_DURATION_MS }, MAX_DURATION_MS + 5)).toMatchObject({
      admitted: true,
      remaining: 1,
    });
  });
});

describe('`requests` up to 1,000,000,000 (item 16)', () => {
  it('the schema maximum is 10^9', () => {
    expect(MAX_RATE_LIMIT_REQUESTS).toBe(1_000_000_000);
  });

  it('10^9 per hour: 200,000 requests in the same 3 ms take 3 slots', () => {
    const limiter = createRateLimiter();
    const config = { requests: MAX_RATE_LIMIT_REQUESTS, windowMs: HOUR };
    let admitted = 0;
    for (let i = 0; i < 200_000; i++) if (tryRequest(limiter, config, 1_000 + Math.floor(i / 70_000))) admitted++;
    expect(admitted).toBe(200_000);
    expect(limiter.footprint()).toEqual({ slots: 3, capacity: 16 });
    expect(limiter.check(config, 1_002)).toEqual({
      admitted: true,
      limit: 1_000_000_000,
      remaining: 999_800_000,
      resetSeconds: 3_600,
      retryAfterSeconds: 0,
    });
  });

  it('memory follows the distinct times in the window, and shrinks when the window holds less', () => {
    const limiter = createRateLimiter({ historySlots: 64 });
    const config = { requests: MAX_RATE_LIMIT_REQUESTS, windowMs: 1_000 };
    for (let t = 0; t < 100_000; t++) tryRequest(limiter, config, t);
    // 1,000 ms in the window plus at most 128 history slots, in a power-of-two ring.
    expect(limiter.footprint().slots).toBeLessThanOrEqual(1_000 + 128);
    expect(limiter.footprint().capacity).toBeLessThanOrEqual(2_048);
    expect(limiter.check(config, 100_000)).toMatchObject({ admitted: true, remaining: MAX_RATE_LIMIT_REQUESTS - 999 });
    // A quiet spell: the window empties, its slots become history and are merged down.
    for (let t = 200_000; t < 200_200; t += 10) tryRequest(limiter, config, t);
    expect(limiter.footprint().slots).toBeLessThanOrEqual(20 + 128);
    expect(limiter.footprint().capacity).toBeLessThanOrEqual(512);
  });

  it('a full window of 10^9 frees its slot a window after the burst', () => {
    const limiter = createRateLimiter();
    const config = { requests: 3, windowMs: 1_000 };
    const huge = { requests: MAX_RATE_LIMIT_REQUESTS, windowMs: 1_000 };
    for (let i = 0; i < 10; i++) tryRequest(limiter, huge, 5);
    // Back to 3: ten counted in one slot; all leave together, a window after it.
    expect(limiter.check(config, 500)).toEqual({
      admitted: false,
      limit: 3,
      remaining: 0,
      resetSeconds: 1,
      retryAfterSeconds: 1,
    });
    expect(limiter.admits(config, 1_004)).toBe(false);
    expect(limiter.check(config, 1_005)).toMatchObject({ admitted: true, remaining: 3 });
  });
});

describe('the config accepts `requests` up to 1,000,000,000 (item 16)', () => {
  const yaml = (requests: number) =>
    `apiKey: mk_test\nlimits:\n  rateLimit:\n    requests: ${requests}\n    window: 1m\n`;

  it('accepts 1,000,000,000', async () => {
    const result = await parseConfig(yaml(1_000_000_000), 'mockapi.yaml');
    expect(result.ok && result.config.limits.rateLimit).toEqual({ requests: 1_000_000_000, windowMs: 60_000 });
  });

  it.each([1_000_000_001, 0])('refuses %i with the message of the other bounds', async (requests) => {
    const result = await parseConfig(yaml(requests), 'mockapi.yaml');
    expect(result.ok ? [] : result.issues.map(formatIssue)).toEqual([
      `mockapi.yaml:4:15: limits.rateLimit.requests must be between 1 and 1000000000, got ${requests}`,
    ]);
  });
});
