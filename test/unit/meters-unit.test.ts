// Unit tests of the meters (src/pipeline/meters.ts, meter-window.ts, provider-headers.ts) with a fake
// clock: exact sliding windows of amounts, months and totals, settles, and the providers' formats.
import { describe, expect, test } from 'vitest';
import type { MeterConfig } from '../../src/config/types.js';
import { createGate, type LimitVerdict } from '../../src/pipeline/limits.js';
import { createMeterLedger, NOT_METERED } from '../../src/pipeline/meters.js';
import { createLimitStyle } from '../../src/pipeline/limit-headers.js';
import { goDuration } from '../../src/pipeline/provider-headers.js';
import { createMemoryUsageStore } from '../../src/state/usage-store.js';

const M = 1_000_000;
const T0 = Date.parse('2026-05-31T23:59:00Z');
const tokens: MeterConfig = {
  name: 'tokens',
  limit: 100 * M,
  period: 'window',
  windowMs: 60_000,
  exhausted: 'quotaExceeded',
};
const spend: MeterConfig = {
  name: 'spend',
  limit: 5 * M,
  period: 'month',
  windowMs: 0,
  exhausted: 'insufficientQuota',
};
const points: MeterConfig = { name: 'points', limit: 10 * M, period: 'total', windowMs: 0, exhausted: 'quotaExceeded' };
const meters = [tokens, spend];

describe('the meter ledger', () => {
  test('a window admits a reserve only while it fits; the wait is until enough has left', () => {
    const ledger = createMeterLedger();
    ledger.record(meters, [60 * M, 0], T0);
    ledger.record(meters, [30 * M, 0], T0 + 10_000);
    expect(ledger.refusal(meters, [10 * M, 0], T0 + 20_000)).toBeUndefined();
    const refused = ledger.refusal(meters, [20 * M, 0], T0 + 20_000);
    expect(refused).toMatchObject({ why: 'window', used: 90 * M, requested: 20 * M, retryAfterMs: 40_000 });
    // Only once the 60 left (at T0 + 60 s) does 20 fit; at T0 + 59.999 s it still does not.
    expect(ledger.refusal(meters, [20 * M, 0], T0 + 59_999)?.why).toBe('window');
    expect(ledger.refusal(meters, [20 * M, 0], T0 + 60_000)).toBeUndefined();
  });

  test('a reserve over the whole limit can never fit, before a full window or a spent budget', () => {
    const ledger = createMeterLedger();
    ledger.set(spend, 5 * M, T0);
    expect(ledger.refusal(meters, [101 * M, 0], T0)).toMatchObject({ meter: tokens, why: 'never', retryAfterMs: 0 });
    expect(ledger.refusal(meters, [1 * M, 0], T0)).toMatchObject({
      meter: spend,
      why: 'exhausted',
      retryAfterMs: 60_000,
    });
    // A meter the endpoint does not name is not asked.
    expect(ledger.refusal(meters, [1 * M, NOT_METERED], T0)).toBeUndefined();
  });

  test('a month or total with room left but less than asked is not spent: a month waits for its reset, a total never fits it; a smaller request still passes', () => {
    const ledger = createMeterLedger();
    ledger.record([spend, points], [1 * M, 1 * M], T0);
    expect(ledger.refusal([spend], [4.5 * M], T0)).toMatchObject({
      meter: spend,
      why: 'window',
      used: 1 * M,
      requested: 4.5 * M,
      retryAfterMs: 60_000, // until June
    });
    expect(ledger.refusal([points], [9.5 * M], T0)).toMatchObject({ meter: points, why: 'never', used: 1 * M });
    expect(ledger.refusal([spend, points], [4 * M, 9 * M], T0)).toBeUndefined();
    // Spent is nothing left: then whatever is asked.
    ledger.record([spend], [4 * M], T0);
    expect(ledger.refusal([spend], [1, 0], T0)?.why).toBe('exhausted');
  });

  test('a month starts again at 0, a total never does; settles correct the month they were counted in', () => {
    const ledger = createMeterLedger();
    ledger.record([spend, points], [4 * M, 9 * M], T0);
    ledger.settle({ at: T0, month: '2026-05', meters: [spend, points], reserves: [4 * M, 9 * M] }, [1 * M, -2 * M]);
    expect(ledger.status([spend, points], T0).map((s) => s.used)).toEqual([5 * M, 7 * M]);
    const june = T0 + 60_000;
    expect(ledger.status([spend, points], june).map((s) => s.used)).toEqual([0, 7 * M]);
    // A May settle arriving in June corrects nothing of June's.
    ledger.settle({ at: T0, month: '2026-05', meters: [spend, points], reserves: [4 * M, 9 * M] }, [3 * M, 0]);
    expect(ledger.status([spend], june)[0]!.used).toBe(0);
  });

  test('a refund leaves the window with the reservation it corrects, never later', () => {
    const ledger = createMeterLedger();
    ledger.record([tokens], [80 * M], T0);
    ledger.record([tokens], [10 * M], T0 + 30_000);
    ledger.settle({ at: T0, month: '2026-05', meters: [tokens], reserves: [80 * M] }, [-70 * M]);
    expect(ledger.status([tokens], T0 + 30_000)[0]!.used).toBe(20 * M);
    // At T0 + 60 s the corrected admission leaves: the window holds the 10 alone, never -60.
    expect(ledger.status([tokens], T0 + 60_000)[0]!.used).toBe(10 * M);
    // A settle of an admission that already left is dropped.
    ledger.settle({ at: T0, month: '2026-05', meters: [tokens], reserves: [80 * M] }, [50 * M]);
    expect(ledger.status([tokens], T0 + 60_000)[0]!.used).toBe(10 * M);
  });

  test('a settle may take a window over its limit, as the real APIs do; then nothing fits until it drains', () => {
    const ledger = createMeterLedger();
    ledger.record([tokens], [50 * M], T0);
    ledger.settle({ at: T0, month: '2026-05', meters: [tokens], reserves: [50 * M] }, [70 * M]);
    expect(ledger.status([tokens], T0)[0]!.used).toBe(120 * M);
    expect(ledger.refusal([tokens], [0], T0 + 1)).toMatchObject({ why: 'window', retryAfterMs: 59_999 });
  });
});

describe('the gate with meters', () => {
  const limits = { rateLimit: { requests: 10, windowMs: 60_000 }, meters };
  test('a meter refusal consumes nothing: neither the rate window, nor the month, nor another meter', () => {
    const gate = createGate(createMemoryUsageStore());
    const first = gate.admit(limits, T0, [90 * M, 1 * M]);
    expect(first).toMatchObject({ outcome: 'admitted', rate: { remaining: 9 }, settle: { at: T0, month: '2026-05' } });
    const refused = gate.admit(limits, T0 + 1, [20 * M, 1 * M]);
    expect(refused).toMatchObject({
      outcome: 'rate_limited',
      retryAfterSeconds: 60,
      rate: { remaining: 9 },
      meter: { why: 'window' },
    });
    expect(gate.meters.status(meters, T0 + 1).map((s) => s.used)).toEqual([90 * M, 1 * M]);
    // A request to an endpoint without a cost asks no meter, and shows them all.
    expect(gate.admit(limits, T0 + 2)).toMatchObject({
      outcome: 'admitted',
      meters: [{ used: 90 * M }, { used: 1 * M }],
    });
  });
});

describe('limit headers of meters', () => {
  const verdict = (extra: Partial<LimitVerdict>): LimitVerdict => ({
    outcome: 'admitted',
    rate: { limit: 60, remaining: 59, resetSeconds: 1 },
    retryAfterSeconds: 0,
    meters: [
      { meter: tokens, used: 12.5 * M, resetMs: 360_000 },
      { meter: spend, used: 1.25 * M, resetMs: 86_400_000 },
    ],
    ...extra,
  });

  test('go durations as OpenAI writes its resets', () => {
    expect([0, 12, 999, 1000, 1500, 60_000, 360_000, 3_723_500].map(goDuration)).toEqual([
      '0s',
      '12ms',
      '999ms',
      '1s',
      '1.5s',
      '1m0s',
      '6m0s',
      '1h2m3.5s',
    ]);
  });

  test('openai: requests and each window meter, remaining in whole tokens; a 429 carries retry-after-ms beside Retry-After', () => {
    const style = createLimitStyle(
      { rateLimit: { requests: 60, windowMs: 60_000 } },
      { providers: ['openai'], meters },
    )!;
    expect(style.headers(verdict({}), T0)).toEqual([
      'x-ratelimit-limit-requests',
      '60',
      'x-ratelimit-remaining-requests',
      '59',
      'x-ratelimit-reset-requests',
      '1s',
      'x-ratelimit-limit-tokens',
      '100',
      'x-ratelimit-remaining-tokens',
      '87',
      'x-ratelimit-reset-tokens',
      '6m0s',
    ]);
    const refused = verdict({
      outcome: 'rate_limited',
      retryAfterSeconds: 3,
      meter: { meter: tokens, why: 'window', used: 95 * M, requested: 10 * M, retryAfterMs: 2_250 },
    });
    expect(style.headers(refused, T0).slice(-4)).toEqual(['Retry-After', '3', 'retry-after-ms', '2250']);
    const never = verdict({
      outcome: 'rate_limited',
      meter: { meter: tokens, why: 'never', used: 0, requested: 200 * M, retryAfterMs: 0 },
    });
    expect(style.headers(never, T0).slice(-4)).toEqual(['Retry-After', '0', 'retry-after-ms', '0']);
    const spent = verdict({
      outcome: 'quota_exceeded',
      retryAfterSeconds: 86_400,
      meter: { meter: spend, why: 'exhausted', used: 5 * M, requested: 0, retryAfterMs: 86_400_000 },
    });
    expect(style.headers(spent, T0)).not.toContain('Retry-After');
  });

  test('anthropic: RFC 3339 resets, and a tokens set from the tightest token meter', () => {
    const style = createLimitStyle(
      { rateLimit: { requests: 60, windowMs: 60_000 } },
      { providers: ['anthropic'], meters: [{ ...tokens, name: 'output_tokens' }] },
    )!;
    const headers = style.headers(
      verdict({ meters: [{ meter: { ...tokens, name: 'output_tokens' }, used: 40 * M, resetMs: 30_000 }] }),
      T0,
    );
    expect(headers).toEqual([
      'anthropic-ratelimit-requests-limit',
      '60',
      'anthropic-ratelimit-requests-remaining',
      '59',
      'anthropic-ratelimit-requests-reset',
      '2026-05-31T23:59:01Z',
      'anthropic-ratelimit-output-tokens-limit',
      '100',
      'anthropic-ratelimit-output-tokens-remaining',
      '60',
      'anthropic-ratelimit-output-tokens-reset',
      '2026-05-31T23:59:30Z',
      'anthropic-ratelimit-tokens-limit',
      '100',
      'anthropic-ratelimit-tokens-remaining',
      '60',
      'anthropic-ratelimit-tokens-reset',
      '2026-05-31T23:59:30Z',
    ]);
  });

  test('github: the meter the request counted against (points → graphql), else the request window (core)', () => {
    const style = createLimitStyle(
      { rateLimit: { requests: 60, windowMs: 60_000 } },
      { providers: ['github'], meters: [{ ...tokens, name: 'points' }] },
    )!;
    const pointsVerdict = verdict({
      meters: [{ meter: { ...tokens, name: 'points' }, used: 30 * M, resetMs: 30_500 }],
      settle: { at: T0, month: '2026-05', meters: [], reserves: [5 * M] },
    });
    expect(style.headers(pointsVerdict, T0)).toEqual([
      'x-ratelimit-limit',
      '100',
      'x-ratelimit-remaining',
      '70',
      'x-ratelimit-used',
      '30',
      'x-ratelimit-reset',
      String(Math.ceil((T0 + 30_500) / 1000)),
      'x-ratelimit-resource',
      'graphql',
    ]);
    expect(style.headers(verdict({ meters: [] }), T0).slice(-2)).toEqual(['x-ratelimit-resource', 'core']);
    // Whole numbers, as GitHub sends them: used rounded up, remaining down, never more than the limit together.
    const fraction = verdict({
      meters: [{ meter: { ...tokens, name: 'points' }, used: 12.5 * M, resetMs: 1000 }],
      settle: { at: T0, month: '2026-05', meters: [], reserves: [5 * M] },
    });
    expect(style.headers(fraction, T0).slice(0, 6)).toEqual([
      'x-ratelimit-limit',
      '100',
      'x-ratelimit-remaining',
      '87',
      'x-ratelimit-used',
      '13',
    ]);
    // Refused by a monthly budget: GitHub has no header for one; the request window's are sent.
    const budget: MeterConfig = { ...spend, name: 'budget', exhausted: 'quotaExceeded' };
    const spent = verdict({
      outcome: 'quota_exceeded',
      meters: [{ meter: budget, used: 10 * M, resetMs: 60_000 }],
      meter: { meter: budget, why: 'exhausted', used: 10 * M, requested: 1 * M, retryAfterMs: 60_000 },
    });
    expect(style.headers(spent, T0).slice(0, 10)).toEqual([
      'x-ratelimit-limit',
      '60',
      'x-ratelimit-remaining',
      '59',
      'x-ratelimit-used',
      '1',
      'x-ratelimit-reset',
      String(Math.ceil(T0 / 1000) + 1),
      'x-ratelimit-resource',
      'core',
    ]);
  });

  test('ietf: meters join the window and month policies (r an Integer, as the draft says); without limitHeaders they are added beside limits.headers', () => {
    const ietf = createLimitStyle({ rateLimit: { requests: 60, windowMs: 60_000 } }, { providers: ['ietf'], meters })!;
    expect(ietf.headers(verdict({}), T0)).toEqual([
      'RateLimit-Policy',
      '"window";q=60;w=60, "tokens";q=100;w=60, "spend";q=5',
      'RateLimit',
      '"window";r=59;t=1, "tokens";r=87;t=360, "spend";r=3;t=86400',
    ]);
    const legacy = createLimitStyle({ rateLimit: { requests: 60, windowMs: 60_000 } }, { meters })!;
    expect(legacy.headers(verdict({}), T0).slice(0, 6)).toEqual([
      'RateLimit-Limit',
      '60',
      'RateLimit-Remaining',
      '59',
      'RateLimit-Reset',
      '1',
    ]);
    expect(legacy.headers(verdict({}), T0).slice(6, 8)).toEqual([
      'RateLimit-Policy',
      '"tokens";q=100;w=60, "spend";q=5',
    ]);
  });

  test('headerName renames a meter in every style: the header names, the GitHub resource and the ietf item', () => {
    const renamed: MeterConfig = { ...tokens, name: 'completion_budget', headerName: 'tokens' };
    const status = verdict({
      rate: undefined,
      meters: [{ meter: renamed, used: 40 * M, resetMs: 1500 }],
      settle: { at: T0, month: '2026-05', meters: [], reserves: [5 * M] },
    });
    const openai = createLimitStyle({}, { providers: ['openai'], meters: [renamed] })!;
    expect(openai.headers(status, T0)).toEqual([
      'x-ratelimit-limit-tokens',
      '100',
      'x-ratelimit-remaining-tokens',
      '60',
      'x-ratelimit-reset-tokens',
      '1.5s',
    ]);
    const anthropic = createLimitStyle({}, { providers: ['anthropic'], meters: [renamed] })!;
    expect(anthropic.headers(status, T0).filter((_, i) => i % 2 === 0)).toEqual([
      'anthropic-ratelimit-tokens-limit',
      'anthropic-ratelimit-tokens-remaining',
      'anthropic-ratelimit-tokens-reset',
    ]);
    const github = createLimitStyle({}, { providers: ['github'], meters: [renamed] })!;
    expect(github.headers(status, T0).slice(-2)).toEqual(['x-ratelimit-resource', 'tokens']);
    const ietf = createLimitStyle({}, { providers: ['ietf'], meters: [renamed] })!;
    expect(ietf.headers(status, T0)).toEqual([
      'RateLimit-Policy',
      '"tokens";q=100;w=60',
      'RateLimit',
      '"tokens";r=60;t=2',
    ]);
    // Without headerName, `_` is written `-`: input_tokens → input-tokens.
    const input = createLimitStyle({}, { providers: ['openai'], meters: [{ ...tokens, name: 'input_tokens' }] })!;
    expect(
      input.headers(
        verdict({ rate: undefined, meters: [{ meter: { ...tokens, name: 'input_tokens' }, used: 0, resetMs: 0 }] }),
        T0,
      )[0],
    ).toBe('x-ratelimit-limit-input-tokens');
  });

  test('a config without meters nor limitHeaders has no style: its precomputed headers stay byte for byte', () => {
    expect(createLimitStyle({ rateLimit: { requests: 60, windowMs: 60_000 } }, {})).toBeUndefined();
  });
});
