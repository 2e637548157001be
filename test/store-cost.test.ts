import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openLimitStore } from '../src/state/redis-store.js';
import { startRedis, type RedisServer } from './helpers/redis.js';
import { waitFor } from './helpers/cli.js';

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
