import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LimitsConfig } from '../../src/config/types.js';
import type { Logger } from '../../src/logger.js';
import { secondsUntilNextMonth } from '../../src/pipeline/quota.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { waitFor } from '../helpers/cli.js';
import { captureLogger, storeGates } from '../helpers/store-gates.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

const gates = (n: number, logger?: Logger, commandTimeoutMs?: number) =>
  storeGates(redis.url, n, logger, commandTimeoutMs);

describe('shared store gate (a real redis-server)', () => {
  it('admits exactly `requests` of a concurrent burst across four servers, each admission seeing its own `remaining`', async () => {
    const { handles, close } = await gates(4);
    const limits: LimitsConfig = { rateLimit: { requests: 50, windowMs: 3_600_000 } };
    const verdicts = await Promise.all(Array.from({ length: 200 }, (_, i) => handles[i % 4]!.gate.admit(limits, 0)));
    const admitted = verdicts.filter((v) => v.outcome === 'admitted');
    expect(admitted).toHaveLength(50);
    // One atomic step per request: no two admissions saw the same window.
    expect(admitted.map((v) => v.rate!.remaining).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 50 }, (_, i) => i),
    );
    for (const v of verdicts.filter((v) => v.outcome !== 'admitted')) {
      expect(v).toEqual({
        outcome: 'rate_limited',
        rate: { limit: 50, remaining: 0, resetSeconds: 3600 },
        retryAfterSeconds: 3600,
      });
    }
    await close();
  });

  it('counts the month across servers, refuses past the quota until the next month, and resets for all', async () => {
    const { handles, close } = await gates(3);
    const limits: LimitsConfig = { monthlyQuota: 30 };
    const verdicts = await Promise.all(Array.from({ length: 90 }, (_, i) => handles[i % 3]!.gate.admit(limits, 0)));
    expect(verdicts.filter((v) => v.outcome === 'admitted')).toHaveLength(30);
    const refused = verdicts.find((v) => v.outcome === 'quota_exceeded')!;
    expect(refused.rate).toBeUndefined();
    expect(Math.abs(refused.retryAfterSeconds - secondsUntilNextMonth(Date.now()))).toBeLessThan(60);
    const store = handles[0]!.store;
    expect((await store.usage()).requests).toBe(30);
    expect(await store.resetUsage()).toEqual({ month: (await store.usage()).month, requests: 30 });
    expect((await handles[2]!.gate.admit(limits, 0)).outcome).toBe('admitted');
    expect((await store.usage()).requests).toBe(1);
    await close();
  });

  it('shows the window as checked on a quota 429, and counts neither on any refusal', async () => {
    const { handles, close } = await gates(1);
    const limits: LimitsConfig = { rateLimit: { requests: 5, windowMs: 3_600_000 }, monthlyQuota: 2 };
    const gate = handles[0]!.gate;
    expect((await gate.admit(limits, 0)).rate).toEqual({ limit: 5, remaining: 4, resetSeconds: 3600 });
    await gate.admit(limits, 0);
    const refused = await gate.admit(limits, 0);
    expect(refused.outcome).toBe('quota_exceeded');
    expect(refused.rate).toEqual({ limit: 5, remaining: 3, resetSeconds: 3600 });
    expect((await handles[0]!.store.usage()).requests).toBe(2);
    await close();
  });

  it('keeps its keys under one hash tag, and loads the script again after Redis forgot it', async () => {
    const { project, handles, close } = await gates(1);
    const limits: LimitsConfig = { rateLimit: { requests: 5, windowMs: 60_000 } };
    await handles[0]!.gate.admit(limits, 0);
    expect(redis.cli('KEYS', `*${project}*`).split('\n').sort()).toEqual([
      `{mockapi:${project}}:meta`,
      `{mockapi:${project}}:usage`,
      `{mockapi:${project}}:window`,
    ]);
    redis.cli('SCRIPT', 'FLUSH');
    expect((await handles[0]!.gate.admit(limits, 0)).rate?.remaining).toBe(3);
    await close();
  });

  it('never lets the window go back in time: a clock behind the last admission counts at that admission', async () => {
    const { project, handles, close } = await gates(1);
    const limits: LimitsConfig = { rateLimit: { requests: 5, windowMs: 60_000 } };
    await handles[0]!.gate.admit(limits, 0);
    const ahead = Number(redis.cli('HGET', `{mockapi:${project}}:meta`, 'last')) + 30_000; // as if Redis's clock then stepped back 30 s
    redis.cli('HSET', `{mockapi:${project}}:meta`, 'last', String(ahead));
    await handles[0]!.gate.admit(limits, 0);
    expect(redis.cli('LRANGE', `{mockapi:${project}}:window`, '-1', '-1')).toBe(`${ahead}:1`);
    await close();
  });
});

describe('shared store gate while Redis is down', () => {
  it('closed: answers store_unavailable, logs the loss and the return once each, and shares again', async () => {
    const logger = captureLogger();
    const { handles, close } = await gates(1, logger);
    const limits: LimitsConfig = { rateLimit: { requests: 100, windowMs: 60_000 }, storeDown: 'closed' };
    const gate = handles[0]!.gate;
    expect((await gate.admit(limits, 0)).outcome).toBe('admitted');
    await redis.kill();
    for (let i = 0; i < 5; i++)
      expect(await gate.admit(limits, 0)).toEqual({
        outcome: 'store_unavailable',
        rate: undefined,
        retryAfterSeconds: 1,
      });
    await redis.restart();
    await waitFor(async () => (await gate.admit(limits, 0)).outcome === 'admitted', 10_000, 50);
    expect(logger.lines.filter((l) => l.startsWith('warn'))).toEqual([
      expect.stringMatching(/unreachable .*503 store_unavailable \(limits.storeDown: closed\)/),
    ]);
    expect(logger.lines.filter((l) => l.startsWith('info'))).toEqual([expect.stringMatching(/is back/)]);
    await close();
  });

  it('a Redis that hangs counts as away once a command has no answer in time, and is back with its first answer', async () => {
    const logger = captureLogger();
    const { handles, close } = await gates(1, logger, 300);
    const limits: LimitsConfig = { monthlyQuota: 1000 };
    const gate = handles[0]!.gate;
    expect((await gate.admit(limits, 0)).outcome).toBe('admitted');
    redis.pause();
    try {
      expect((await gate.admit(limits, 0)).outcome).toBe('store_unavailable');
    } finally {
      redis.resume();
    }
    await waitFor(async () => (await gate.admit(limits, 0)).outcome === 'admitted', 5_000, 20);
    expect(logger.lines).toEqual([
      expect.stringMatching(/^warn .*unreachable \(no answer within 300 ms\)/),
      expect.stringMatching(/^info .*is back/),
    ]);
    await close();
  });

  it.each(['closed', 'open'] as const)(
    '%s: requests answered while Redis hung are counted as answered, though Redis runs their scripts when it resumes',
    async (storeDown) => {
      const { handles, close } = await gates(1, captureLogger(), 300);
      const limits: LimitsConfig = { monthlyQuota: 1000, storeDown };
      const { gate, store } = handles[0]!;
      const outcomes: string[] = [];
      const admit = async () => {
        const { outcome } = await gate.admit(limits, Date.now());
        outcomes.push(outcome);
        return outcome;
      };
      expect(await admit()).toBe('admitted');
      redis.pause();
      try {
        // Sent to a Redis that does not answer: answered at the deadline, by the store-down policy.
        const answered = await Promise.all(Array.from({ length: 5 }, admit));
        expect(answered).toEqual(Array(5).fill(storeDown === 'open' ? 'admitted' : 'store_unavailable'));
      } finally {
        redis.resume(); // runs the 5 scripts it had queued: each counts a request
      }
      await waitFor(async () => (await admit()) === 'admitted', 5_000, 20);
      const admitted = outcomes.filter((o) => o === 'admitted').length;
      expect(admitted).toBe(storeDown === 'open' ? 7 : 2);
      // Every admitted request once, no 503: not 5 more.
      await waitFor(async () => (await store.usage()).requests === admitted, 5_000, 20).catch(() => {});
      expect((await store.usage()).requests).toBe(admitted);
      await close();
    },
  );

  it('open: admits under the local limits, then adds what it counted to the shared month', async () => {
    const logger = captureLogger();
    const { handles, close } = await gates(1, logger);
    const limits: LimitsConfig = { rateLimit: { requests: 3, windowMs: 3_600_000 }, storeDown: 'open' };
    const gate = handles[0]!.gate;
    await gate.admit(limits, 0);
    await redis.kill();
    const outcomes = [];
    for (let i = 0; i < 5; i++) outcomes.push((await gate.admit(limits, Date.now())).outcome);
    expect(outcomes).toEqual(['admitted', 'admitted', 'admitted', 'rate_limited', 'rate_limited']);
    await redis.restart(); // empty: only what this server counted while it was away comes back
    await waitFor(() => logger.lines.some((l) => l.includes('is back')), 10_000, 50);
    await waitFor(async () => (await handles[0]!.store.usage()).requests === 3, 5_000, 50);
    expect(logger.lines.filter((l) => l.startsWith('warn'))).toEqual([
      expect.stringMatching(/unreachable .*counting them locally \(limits.storeDown: open\)/),
    ]);
    await close();
  });
});
