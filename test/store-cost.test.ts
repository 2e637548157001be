import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openLimitStore } from '../src/state/redis-store.js';
import { startRedis, type RedisServer } from './helpers/redis.js';

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
