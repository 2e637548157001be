// Unit tests of what makes a metered answer cheap (issue 41's speed) giving exactly what the plain
// computation gives: the whole-number writer of the limit headers, the reserves of numbers made
// once, the settle given again only for the same answer and only when it reads nothing else, and
// a turn's settles to the shared store added up only where that changes nothing.
import { describe, expect, test } from 'vitest';
import { compileCost, type CostRequest } from '../../src/answer/cost.js';
import type { EndpointConfig, MeterConfig } from '../../src/config/types.js';
import { integerText } from '../../src/integer-text.js';
import { ietfMeterItems } from '../../src/pipeline/provider-headers.js';
import type { LimitVerdict } from '../../src/pipeline/limits.js';
import { merged } from '../../src/state/settle-batch.js';

const M = 1_000_000;
const tokens: MeterConfig = {
  name: 'tokens',
  limit: 9_000_000_000 * M,
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
const meters = [tokens, spend];
const request: CostRequest = { url: '/v1/chat', mockPath: '/v1/chat', headers: {}, body: undefined, state: {}, now: 0 };

function costOf(cost: EndpointConfig['cost']) {
  const endpoint = {
    method: 'POST',
    path: '/v1/chat',
    failRate: 0,
    delayMs: 0,
    cost,
    response: { status: 200, body: {} },
  } as unknown as EndpointConfig;
  return compileCost(endpoint, { env: {}, scenarios: [] })!;
}

describe('integerText', () => {
  test('writes every number as String does', () => {
    const values = [
      0,
      -0,
      7,
      -7,
      2 ** 31 - 1,
      2 ** 31,
      1e9,
      1e9 + 1,
      9_000_000_000,
      8_999_999_717,
      1_764_386_000_000,
      100_000_000_005,
      2 ** 53 - 1,
      2 ** 53,
      2 ** 60,
      1.5,
      3e9 + 0.5,
      -3e9,
      NaN,
      Infinity,
    ];
    for (let i = 0; i < 2000; i++) values.push(Math.floor(Math.random() * 2 ** 53));
    for (const n of values) expect(integerText(n)).toBe(String(n));
  });
});

describe('the ietf items of meters', () => {
  test('each answer gets its own figures, the same figures give the same text', () => {
    const verdict = (used: number, resetMs: number): LimitVerdict => ({
      outcome: 'admitted',
      rate: undefined,
      retryAfterSeconds: 0,
      meters: [
        { meter: tokens, used, resetMs },
        { meter: spend, used: 0, resetMs: 90_000 },
      ],
    });
    expect(ietfMeterItems(verdict(300 * M, 60_000))).toEqual({
      policies: '"tokens";q=9000000000;w=60, "spend";q=5',
      current: '"tokens";r=8999999700;t=60, "spend";r=5;t=90',
    });
    expect(ietfMeterItems(verdict(300 * M, 60_000)).current).toBe('"tokens";r=8999999700;t=60, "spend";r=5;t=90');
    expect(ietfMeterItems(verdict(300.5 * M, 60_000)).current).toBe('"tokens";r=8999999699;t=60, "spend";r=5;t=90');
    expect(ietfMeterItems(verdict(300.5 * M, 59_001)).current).toBe('"tokens";r=8999999699;t=60, "spend";r=5;t=90');
    expect(ietfMeterItems(verdict(300.5 * M, 59_000)).current).toBe('"tokens";r=8999999699;t=59, "spend";r=5;t=90');
    // Another list of meters has its own policies.
    const alone: LimitVerdict = {
      outcome: 'admitted',
      rate: undefined,
      retryAfterSeconds: 0,
      meters: [{ meter: spend, used: 5 * M, resetMs: 0 }],
    };
    expect(ietfMeterItems(alone)).toEqual({ policies: '"spend";q=5', current: '"spend";r=0;t=0' });
  });
});

describe('a compiled cost', () => {
  test('reserves of numbers are one list per list of meters; a reserve read from the request has none', () => {
    const fixed = costOf([{ meter: 'tokens', reserve: 300, settle: '${response.body.usage.total_tokens}' }]);
    expect(fixed.fixedReserves(meters)).toEqual([300 * M, -1]);
    expect(fixed.fixedReserves(meters)).toBe(fixed.fixedReserves(meters));
    expect(fixed.fixedReserves(meters)).toEqual(fixed.reserves(meters, request).reserves);
    expect(costOf([{ meter: 'tokens', reserve: '${len(body)}' }]).fixedReserves(meters)).toBeUndefined();
  });

  test('a settle of the answer alone is read again for another answer, and the same answer settles the same', () => {
    const cost = costOf([
      { meter: 'tokens', reserve: 300, settle: '${response.body.usage.total_tokens}' },
      { meter: 'spend', settle: '${response.body.usage.total_tokens * 0.5}' },
    ]);
    const reserves = cost.fixedReserves(meters)!;
    const answer = { usage: { total_tokens: 17 } };
    const first = cost.deltas(meters, reserves, () => request, { status: 200, body: answer });
    expect(first).toEqual({ deltas: [-283 * M, 8.5 * M], notes: undefined });
    expect(cost.deltas(meters, reserves, () => request, { status: 200, body: answer })).toEqual(first);
    expect(
      cost.deltas(meters, reserves, () => request, { status: 200, body: { usage: { total_tokens: 400 } } }),
    ).toEqual({ deltas: [100 * M, 200 * M], notes: undefined });
    expect(cost.deltas(meters, [500 * M, 0], () => request, { status: 200, body: answer })).toEqual({
      deltas: [-483 * M, 8.5 * M],
      notes: undefined,
    });
    expect(cost.deltas(meters, reserves, () => request, { status: 200, body: { usage: {} } }).notes).toEqual([
      'settle of tokens gave nothing: the reserve of 300 stands',
      'settle of spend gave nothing: the reserve of 0 stands',
    ]);
  });

  test('a settle of the answer alone that calls a random function is worked out with the whole context, not the bare one', () => {
    const cost = costOf([{ meter: 'tokens', settle: '${response.body.usage.total_tokens + randomInt(1, 1)}' }]);
    const settled = cost.deltas(meters, [0, -1], () => request, { status: 200, body: { usage: { total_tokens: 17 } } });
    expect(settled).toEqual({ deltas: [18 * M, 0], notes: undefined });
  });

  test('a settle that reads the request is worked out for every answer', () => {
    const answer = { usage: { total_tokens: 17 } };
    const byHeader = costOf([{ meter: 'tokens', settle: '${len(headers.x) + response.body.usage.total_tokens}' }]);
    const at = (x: string) =>
      byHeader.deltas(meters, [0, -1], () => ({ ...request, headers: { x } }), { status: 200, body: answer }).deltas[0];
    expect(at('abc')).toBe(20 * M);
    expect(at('abcdef')).toBe(23 * M);
  });
});

describe('settles sent together (no audit)', () => {
  test('settles in a row of the same admission time and month are added up, meter by meter, when their signs agree', () => {
    const one = (at: number, month: string, deltas: number[]) => ({ one: { at, month, deltas } });
    expect(
      merged(
        [
          one(5, '2026-05', [-283, 34]),
          one(5, '2026-05', [-100, 34]),
          one(6, '2026-05', [-1, 1]),
          one(5, '2026-06', [-2, 2]),
          one(5, '2026-06', [-3]),
        ],
        2,
      ),
    ).toEqual([
      { at: 5, month: '2026-05', deltas: [-383, 68] },
      { at: 6, month: '2026-05', deltas: [-1, 1] },
      { at: 5, month: '2026-06', deltas: [-5, 2] },
    ]);
    // A refund and a charge on one meter stay apart and in order (a month stops at 0 between them); a 0 goes with either.
    expect(merged([one(5, 'm', [-10, 0]), one(5, 'm', [4, 3]), one(5, 'm', [0, 1]), one(5, 'm', [-1, 0])], 2)).toEqual([
      { at: 5, month: 'm', deltas: [-10, 0] },
      { at: 5, month: 'm', deltas: [4, 4] },
      { at: 5, month: 'm', deltas: [-1, 0] },
    ]);
  });
});

describe('the ietf items of meters, made again only where their figures changed', () => {
  const verdictOf = (...meters: Array<{ meter: MeterConfig; used: number; resetMs: number }>): LimitVerdict => ({
    outcome: 'admitted',
    rate: undefined,
    retryAfterSeconds: 0,
    meters,
  });
  const total: MeterConfig = {
    name: 'credits',
    limit: 10 * M,
    period: 'total',
    windowMs: 0,
    exhausted: 'quotaExceeded',
  };

  test('a reset that changes with the same amount left, and an amount left that comes back, give their own text', () => {
    const item = (used: number, resetMs: number) =>
      ietfMeterItems(verdictOf({ meter: tokens, used, resetMs }, { meter: total, used: 2 * M, resetMs: 0 })).current;
    expect(item(100 * M, 30_000)).toBe('"tokens";r=8999999900;t=30, "credits";r=8');
    expect(item(100 * M, 29_000)).toBe('"tokens";r=8999999900;t=29, "credits";r=8');
    expect(item(200 * M, 29_000)).toBe('"tokens";r=8999999800;t=29, "credits";r=8');
    expect(item(100 * M, 29_000)).toBe('"tokens";r=8999999900;t=29, "credits";r=8');
    expect(item(100 * M, 30_000)).toBe('"tokens";r=8999999900;t=30, "credits";r=8');
    // The later item's figures change alone: its joined text follows.
    expect(
      ietfMeterItems(
        verdictOf({ meter: tokens, used: 100 * M, resetMs: 30_000 }, { meter: total, used: 3 * M, resetMs: 0 }),
      ).current,
    ).toBe('"tokens";r=8999999900;t=30, "credits";r=7');
  });

  test('the same items in another order, and a list of one', () => {
    expect(
      ietfMeterItems(
        verdictOf({ meter: total, used: 3 * M, resetMs: 0 }, { meter: tokens, used: 100 * M, resetMs: 30_000 }),
      ),
    ).toEqual({
      policies: '"credits";q=10, "tokens";q=9000000000;w=60',
      current: '"credits";r=7, "tokens";r=8999999900;t=30',
    });
    expect(ietfMeterItems(verdictOf({ meter: tokens, used: 100 * M, resetMs: 30_000 })).current).toBe(
      '"tokens";r=8999999900;t=30',
    );
    expect(ietfMeterItems(verdictOf())).toEqual({ policies: '', current: '' });
  });
});

describe('the settle of a cost read from the answer alone', () => {
  test('is said to read the answer alone only when every settle does, without a call', () => {
    expect(costOf([{ meter: 'tokens', reserve: 300, settle: '${response.body.usage.total_tokens}' }]).answerOnly).toBe(
      true,
    );
    expect(costOf([{ meter: 'tokens', reserve: 300, settle: 20 }]).answerOnly).toBe(true);
    expect(costOf([{ meter: 'tokens', settle: '${len(headers.x)}' }]).answerOnly).toBe(false);
    expect(costOf([{ meter: 'tokens', settle: '${response.body.n + randomInt(1, 1)}' }]).answerOnly).toBe(false);
  });

  test('gives the last figures again only for the same meters, reserves, status and body value', () => {
    const cost = costOf([{ meter: 'tokens', reserve: 300, settle: '${response.body.usage.total_tokens}' }]);
    const reserves = cost.fixedReserves(meters)!;
    const answer = { usage: { total_tokens: 17 } };
    expect(cost.lastDeltas(meters, reserves, 200, answer)).toBeUndefined();
    const first = cost.deltas(meters, reserves, () => request, { status: 200, body: answer });
    expect(cost.lastDeltas(meters, reserves, 200, answer)).toBe(first);
    expect(cost.lastDeltas(meters, reserves, 201, answer)).toBeUndefined();
    expect(cost.lastDeltas(meters, reserves, 200, { usage: { total_tokens: 17 } })).toBeUndefined();
    expect(cost.lastDeltas(meters, [300 * M, -1], 200, answer)).toBeUndefined();
    expect(cost.lastDeltas([tokens, spend], reserves, 200, answer)).toBeUndefined();
    // A settle that failed is given again with its note.
    const failed = cost.deltas(meters, reserves, () => request, { status: 200, body: { usage: {} } });
    expect(failed.notes).toEqual(['settle of tokens gave nothing: the reserve of 300 stands']);
    expect(cost.lastDeltas(meters, reserves, 200, answer)).toBeUndefined();
  });

  test('a settle that reads the request keeps no last figures', () => {
    const cost = costOf([{ meter: 'tokens', settle: '${len(headers.x) + response.body.n}' }]);
    cost.deltas(meters, [0, -1], () => ({ ...request, headers: { x: 'ab' } }), { status: 200, body: { n: 1 } });
    expect(cost.lastDeltas(meters, [0, -1], 200, { n: 1 })).toBeUndefined();
  });
});
