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

describe('the admissions of one event-loop turn', () => {
  // Commands Redis ran, from its own counters (INFO commandstats), so nothing here is timed.
  const scriptCalls = (): number => {
    const stats = redis.cli('INFO', 'commandstats');
    return ['evalsha', 'eval'].reduce(
      (sum, name) => sum + Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0),
      0,
    );
  };

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
