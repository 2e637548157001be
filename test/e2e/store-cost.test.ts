import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openLimitStore } from '../../src/state/redis-store.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { waitFor } from '../helpers/cli.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

// The store's cost per request is paid on every mock request (issue 19): these pin what it must not do.
describe('the limit store per request', () => {
  it('makes no timer of its own per command (one deadline sweep keeps the timeout)', async () => {
    const store = await openLimitStore({ url: redis.url, project: `cost-${process.pid}` });
    const limits = { rateLimit: { requests: 1000, windowMs: 60_000 }, monthlyQuota: 1000 };
    await store.admit(limits); // loads the script
    const timeouts = vi.spyOn(AbortSignal, 'timeout');
    try {
      const replies = await Promise.all(Array.from({ length: 20 }, () => store.admit(limits)));
      expect(replies.every((r) => r[0] === 0)).toBe(true);
      expect(timeouts).not.toHaveBeenCalled();
    } finally {
      timeouts.mockRestore();
      await store.close();
    }
  });
});

// Commands Redis ran, from its own counters (INFO commandstats), so nothing here is timed.
const scriptCalls = (): number => {
  const stats = redis.cli('INFO', 'commandstats');
  return ['evalsha', 'eval'].reduce(
    (sum, name) => sum + Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0),
    0,
  );
};

describe('the admissions of one event-loop turn', () => {
  it('go to Redis as one script call, each request decided in order (exact)', async () => {
    const store = await openLimitStore({ url: redis.url, project: `batch-${process.pid}` });
    const limits = { rateLimit: { requests: 15, windowMs: 60_000 }, monthlyQuota: 1000 };
    try {
      await store.admit(limits); // loads the script
      redis.cli('CONFIG', 'RESETSTAT');
      const replies = await Promise.all(Array.from({ length: 20 }, () => store.admit(limits)));
      expect(scriptCalls()).toBe(1);
      // 1 admitted before; 14 more fit in the window of 15, the other 6 are refused.
      expect(replies.map((r) => r[0])).toEqual([...Array(14).fill(0), ...Array(6).fill(1)]);
      expect(replies.slice(0, 14).map((r) => r[2])).toEqual(Array.from({ length: 14 }, (_, i) => 13 - i));
      expect(replies[19]).toEqual([1, 15, 0, 60, 60]);
      expect((await store.usage()).requests).toBe(15);
    } finally {
      await store.close();
    }
  });

  it('with different limits (a reload between requests) go as one call per set of limits', async () => {
    const store = await openLimitStore({ url: redis.url, project: `batch-mixed-${process.pid}` });
    try {
      await store.usage(); // connected, scripts aside
      await store.admit({ monthlyQuota: 10 });
      redis.cli('CONFIG', 'RESETSTAT');
      const replies = await Promise.all([
        store.admit({ monthlyQuota: 3 }),
        store.admit({ monthlyQuota: 10 }),
        store.admit({ monthlyQuota: 3 }),
        store.admit({ monthlyQuota: 3 }),
      ]);
      expect(scriptCalls()).toBe(2);
      // quota 3: 1 counted before, two more admitted, the third refused (its call ran first); quota 10: admitted.
      expect(replies.map((r) => r[0])).toEqual([0, 0, 0, 2]);
      expect((await store.usage()).requests).toBe(4);
    } finally {
      await store.close();
    }
  });
});

describe('the shared window after a reload lowered the limit', () => {
  it('counts what trimming removed even when the request is refused (a refusal must not leave a stale count)', async () => {
    // Four admissions in the window as a limit of 4 left them, oldest first; the limit is now 2.
    // Entries are written by hand, at times relative to Redis's clock, to place their expiries.
    const project = `lowered-${process.pid}`;
    const [windowKey, metaKey] = [`{mockapi:${project}}:window`, `{mockapi:${project}}:meta`];
    const redisNow = () => {
      const [s, us] = redis.cli('TIME').split('\n').map(Number);
      return s! * 1000 + Math.floor(us! / 1000);
    };
    const t = redisNow();
    const windowMs = 60_000;
    redis.cli('RPUSH', windowKey, `${t - 2 * windowMs}:1`, `${t - windowMs + 300}:1`, `${t}:2`);
    redis.cli('HSET', metaKey, 'last', String(t), 'counted', '4');
    const store = await openLimitStore({ url: redis.url, project });
    const limits = { rateLimit: { requests: 2, windowMs } };
    try {
      // The oldest leaves: 3 remain, above 2.
      expect((await store.admit(limits))[0]).toBe(1);
      // Once the second leaves, 2 remain (still 2 ≥ 2): refused.
      await waitFor(() => redisNow() > t + 400, 5000, 20);
      expect((await store.admit(limits))[0]).toBe(1);
      expect(redis.cli('HGET', metaKey, 'counted')).toBe('2');
    } finally {
      await store.close();
    }
  });
});

describe('meters through the store', () => {
  const M = 1_000_000;
  const tokens = {
    name: 'tokens',
    limit: 1000 * M,
    period: 'window',
    windowMs: 60_000,
    exhausted: 'quotaExceeded',
  } as const;
  const spend = { name: 'spend', limit: 1000 * M, period: 'month', windowMs: 0, exhausted: 'quotaExceeded' } as const;
  const meters = [tokens, spend];
  const limits = { rateLimit: { requests: 100, windowMs: 60_000 }, meters };

  it('settles of a turn ride with the admission call of the same meters, applied before its requests; alone, they make a call of their own', async () => {
    const store = await openLimitStore({ url: redis.url, project: `settle-ride-${process.pid}` });
    try {
      const first = await Promise.all([
        store.admit(limits, undefined, undefined, [300 * M, -1]),
        store.admit(limits, undefined, undefined, [300 * M, -1]),
      ]);
      expect(first.map((r) => r[7])).toEqual([300 * M, 600 * M]); // each request's tokens after it
      await store.settle(meters, { at: 0, month: '2000-01', deltas: [0, 0] }); // loads the settle script
      redis.cli('CONFIG', 'RESETSTAT');
      // Each answer used 17 tokens (283 refunded) and spent 34 millionths.
      const settled = first.map((r) =>
        store.settle(meters, { at: r.countedAt!, month: r.month!, deltas: [-283 * M, 34] }),
      );
      const next = store.admit(limits, undefined, undefined, [300 * M, -1]);
      await Promise.all(settled);
      const reply = await next;
      expect(scriptCalls()).toBe(1);
      expect([reply[0], reply[7], reply[9]]).toEqual([0, (17 + 17 + 300) * M, 68]);
      expect(reply[8]).toBeGreaterThan(0); // the window's reset: from its first amount, before this call
      expect(reply[8]).toBeLessThanOrEqual(60_000);
      redis.cli('CONFIG', 'RESETSTAT');
      await store.settle(meters, { at: reply.countedAt!, month: reply.month!, deltas: [-290 * M, 5] });
      expect(scriptCalls()).toBe(1);
      expect((await store.meterStatus(meters)).used).toEqual([44 * M, 73]);
    } finally {
      await store.close();
    }
  });

  it("a meter window's list and amounts expire a window or two after its newest amount, set once a window, not by every call", async () => {
    const project = `meter-expiry-${process.pid}`;
    const store = await openLimitStore({ url: redis.url, project });
    const list = `{mockapi:${project}}:meter:tokens:list`;
    const meta = `{mockapi:${project}}:meter:tokens:meta`;
    try {
      await store.admit(limits, undefined, undefined, [1 * M, -1]);
      const tail = Number(redis.cli('HGET', meta, 'tail'));
      const expires = Number(redis.cli('PEXPIRETIME', list));
      expect(expires).toBe(tail + 2 * 60_000 + 1000);
      expect(Number(redis.cli('PEXPIRETIME', `{mockapi:${project}}:meter:tokens:amounts`))).toBe(expires);
      // A later millisecond's amount leaves them as they are: still at least a window after it.
      await waitFor(async () => {
        await store.admit(limits, undefined, undefined, [1 * M, -1]);
        return Number(redis.cli('HGET', meta, 'tail')) > tail;
      });
      expect(Number(redis.cli('PEXPIRETIME', list))).toBe(expires);
      expect(Number(redis.cli('LLEN', list))).toBeGreaterThanOrEqual(2);
    } finally {
      await store.close();
    }
  });
});
