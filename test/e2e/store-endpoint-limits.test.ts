// Endpoint windows (`endpoints[].limits.rateLimit`) through a shared store: kept in Redis and decided
// in the same script call as the key's window and month (a real redis-server, the store gates of
// several servers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LimitsConfig } from '../../src/config/types.js';
import type { Logger } from '../../src/logger.js';
import { createStoreGate, type StoreGateHandle } from '../../src/pipeline/store-gate.js';
import { endpointId } from '../../src/state/limit-script.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {} };
const HOUR = 3_600_000;
let projects = 0;

/** `n` gates of one fresh project (of the key `keyName`, or apiKey's), as `n` servers would hold. */
async function gates(
  n: number,
  keyName?: string,
): Promise<{ project: string; handles: StoreGateHandle[]; close(): Promise<void> }> {
  const project = `ep${++projects}-${process.pid}`;
  const handles = await Promise.all(
    Array.from({ length: n }, () =>
      createStoreGate({ url: redis.url, project, logger: quiet, ...(keyName === undefined ? {} : { keyName }) }),
    ),
  );
  return { project, handles, close: async () => void (await Promise.all(handles.map((h) => h.close()))) };
}

const search = (requests: number, windowMs = HOUR) => ({ route: 'GET /search', rateLimit: { requests, windowMs } });

describe('endpoint windows in a shared store', () => {
  it('admit exactly the endpoint limit of a concurrent burst across four servers', async () => {
    const { handles, close } = await gates(4);
    const limits: LimitsConfig = { rateLimit: { requests: 1000, windowMs: HOUR } };
    const verdicts = await Promise.all(
      Array.from({ length: 80 }, (_, i) => handles[i % 4]!.gate.admit(limits, 0, search(7))),
    );
    const admitted = verdicts.filter((v) => v.outcome === 'admitted');
    expect(admitted).toHaveLength(7);
    // The endpoint window (7) is closer to full than the key's (1000): its headers, each admission its own remaining.
    expect(admitted.map((v) => v.rate!.remaining).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(admitted.every((v) => v.rate!.limit === 7)).toBe(true);
    for (const v of verdicts.filter((v) => v.outcome !== 'admitted')) {
      expect(v).toEqual({
        outcome: 'rate_limited',
        rate: { limit: 7, remaining: 0, resetSeconds: 3600 },
        retryAfterSeconds: 3600,
      });
    }
    // The key's window counted the 7 admitted only: another endpoint still has 993 of it.
    expect((await handles[0]!.gate.admit(limits, 0)).rate).toEqual({ limit: 1000, remaining: 992, resetSeconds: 3600 });
    await close();
  });

  it('a request the endpoint window refuses consumes nothing of the key window or the month', async () => {
    const { handles, close } = await gates(2);
    const [a, b] = [handles[0]!.gate, handles[1]!.gate];
    const limits: LimitsConfig = { rateLimit: { requests: 4, windowMs: HOUR }, monthlyQuota: 100 };
    const outcomes = [];
    for (let i = 0; i < 5; i++) outcomes.push((await (i % 2 === 0 ? a : b).admit(limits, 0, search(2))).outcome);
    expect(outcomes).toEqual(['admitted', 'admitted', 'rate_limited', 'rate_limited', 'rate_limited']);
    // 2 of the key's 4 used: two more elsewhere, then the key's window is full.
    expect((await b.admit(limits, 0)).rate).toEqual({ limit: 4, remaining: 1, resetSeconds: 3600 });
    expect((await a.admit(limits, 0)).outcome).toBe('admitted');
    expect((await b.admit(limits, 0)).outcome).toBe('rate_limited');
    expect((await a.usage(limits, 0)).requests).toBe(4);
    await close();
  });

  it("a request the key's limits refuse consumes nothing of the endpoint window", async () => {
    const { project, handles, close } = await gates(2, 'ci');
    const [a, b] = [handles[0]!.gate, handles[1]!.gate];
    // The month refuses: its 429 shows the windows as checked, the endpoint's being closer to full.
    const capped: LimitsConfig = { rateLimit: { requests: 100, windowMs: HOUR }, monthlyQuota: 2 };
    expect((await a.admit(capped, 0, search(3))).rate).toEqual({ limit: 3, remaining: 2, resetSeconds: 3600 });
    expect((await b.admit(capped, 0, search(3))).outcome).toBe('admitted');
    expect(await a.admit(capped, 0, search(3))).toEqual({
      outcome: 'quota_exceeded',
      rate: { limit: 3, remaining: 1, resetSeconds: 3600 },
      retryAfterSeconds: expect.any(Number),
    });
    await b.setUsage(0, 0);
    // The key's window refuses (full at 2): then it is emptied, as when it expires.
    const tight: LimitsConfig = { rateLimit: { requests: 2, windowMs: HOUR } };
    expect(await b.admit(tight, 0, search(3))).toEqual({
      outcome: 'rate_limited',
      rate: { limit: 2, remaining: 0, resetSeconds: 3600 },
      retryAfterSeconds: 3600,
    });
    expect((await a.admit(tight, 0, search(3))).outcome).toBe('rate_limited');
    redis.cli('DEL', `{mockapi:${project}}:key:ci:window`, `{mockapi:${project}}:key:ci:meta`);
    // Neither refusal took an endpoint slot: the third is still free, the fourth is not.
    expect(await b.admit(tight, 0, search(3))).toEqual({
      outcome: 'admitted',
      rate: { limit: 3, remaining: 0, resetSeconds: 3600 },
      retryAfterSeconds: 0,
    });
    expect((await a.admit(tight, 0, search(3))).rate).toEqual({ limit: 3, remaining: 0, resetSeconds: 3600 });
    await close();
  });

  it('are kept per key and per endpoint under the key, by a hash of the route, and a reset empties every one', async () => {
    const { project, handles, close } = await gates(2);
    const [a, b] = [handles[0]!.gate, handles[1]!.gate];
    const limits: LimitsConfig = { rateLimit: { requests: 100, windowMs: HOUR } };
    const other = { route: 'POST /orders/:id', rateLimit: { requests: 1, windowMs: HOUR } };
    // One turn, two endpoints and none: one script call decides all of them.
    const turn = await Promise.all([
      a.admit(limits, 0, search(1)),
      a.admit(limits, 0, other),
      a.admit(limits, 0),
      a.admit(limits, 0, search(1)),
      a.admit(limits, 0, other),
    ]);
    expect(turn.map((v) => v.outcome)).toEqual(['admitted', 'admitted', 'admitted', 'rate_limited', 'rate_limited']);
    const tag = `{mockapi:${project}}`;
    const ids = [endpointId('GET /search'), endpointId('POST /orders/:id')].sort();
    expect(ids.every((id) => /^[0-9a-f]{16}$/.test(id))).toBe(true);
    expect(redis.cli('SMEMBERS', `${tag}:eps`).split('\n').sort()).toEqual(ids);
    expect(redis.cli('LLEN', `${tag}:ep:${endpointId('GET /search')}:window`)).toBe('1');
    expect((await b.admit(limits, 0, search(1))).outcome).toBe('rate_limited');

    await b.reset({ usage: false, rateLimit: true });
    expect(redis.cli('KEYS', `${tag}:*`)).toBe(`${tag}:usage`); // the month stays
    expect((await a.admit(limits, 0, search(1))).outcome).toBe('admitted');
    expect((await b.admit(limits, 0, other)).outcome).toBe('admitted');
    expect(redis.cli('SMEMBERS', `${tag}:eps`).split('\n').sort()).toEqual(ids);
    await close();
  });

  it('with storeDown: open and Redis away, fall back to this server’s own endpoint window', async () => {
    const { handles, close } = await gates(1);
    const { gate } = handles[0]!;
    const limits: LimitsConfig = { rateLimit: { requests: 10, windowMs: HOUR }, storeDown: 'open' };
    await redis.kill();
    try {
      const outcomes = [];
      for (let i = 0; i < 3; i++) outcomes.push((await gate.admit(limits, 1000, search(2))).outcome);
      expect(outcomes).toEqual(['admitted', 'admitted', 'rate_limited']);
      // The refusal took nothing of the fallback's key window: 8 of 10 left for another endpoint.
      expect((await gate.admit(limits, 1000)).rate).toEqual({ limit: 10, remaining: 7, resetSeconds: 3600 });
      gate.forget({ usage: false, rateLimit: true }, 1000);
      expect((await gate.admit(limits, 1000, search(2))).outcome).toBe('admitted');
      expect((await gate.admit({ ...limits, storeDown: 'closed' }, 1000, search(2))).outcome).toBe('store_unavailable');
    } finally {
      await redis.restart();
      await close();
    }
  });
});
