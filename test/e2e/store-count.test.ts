// Admissions with nothing to decide through a shared store (a real redis-server): a request under
// limits with no rate limit, quota, meter or endpoint window — a fleet's or `--store`'s config
// without limits — is admitted at once and counted in one call per event-loop turn, written before
// anything asked after it; counts a hung Redis ran after all are counted once.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LimitsConfig } from '../../src/config/types.js';
import type { Logger } from '../../src/logger.js';
import type { LimitVerdict } from '../../src/pipeline/limits.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { waitFor } from '../helpers/cli.js';
import { captureLogger, storeGates } from '../helpers/store-gates.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());
afterEach(() => void vi.unstubAllEnvs());

const gates = (n: number, logger?: Logger, commandTimeoutMs?: number) =>
  storeGates(redis.url, n, logger, commandTimeoutMs);

/** Script calls Redis ran (by hash and by source), from its command stats. */
function scriptCalls(): number {
  const stats = redis.cli('INFO', 'commandstats');
  let calls = 0;
  for (const m of stats.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+),.*failed_calls=(\d+)/gm))
    calls += Number(m[1]) - Number(m[2]);
  return calls;
}

const ADMITTED: LimitVerdict = { outcome: 'admitted', rate: undefined, retryAfterSeconds: 0 };

describe('admissions with nothing to decide, through a shared store', () => {
  it('are admitted at once, counted in one call per server and turn, before anything asked after them', async () => {
    const { handles, close } = await gates(2);
    const before = scriptCalls();
    const verdicts = Array.from({ length: 60 }, (_, i) => handles[i % 2]!.gate.admit({}, Date.now()));
    // Nothing to wait for: each verdict is there now.
    for (const v of verdicts) expect(v).toEqual(ADMITTED);
    // A read sent after them on the same connection sees them (the counts were handed to the client first).
    expect((await handles[0]!.store.usage()).requests).toBeGreaterThanOrEqual(30);
    expect((await handles[1]!.store.usage()).requests).toBe(60);
    // One count call per server for the turn (and the two reads), not one per request.
    expect(scriptCalls() - before).toBe(4);
    await close();
  });

  it('a Redis without the script (fresh or restarted) gets the count again with its source', async () => {
    const { handles, close } = await gates(1);
    redis.cli('SCRIPT', 'FLUSH');
    for (let i = 0; i < 20; i++) expect(handles[0]!.gate.admit({}, Date.now())).toEqual(ADMITTED);
    expect((await handles[0]!.store.usage()).requests).toBe(20);
    await close();
  });

  it('a restarted Redis gets every script before any command: none is refused for lack of its script', async () => {
    const logger = captureLogger();
    const { handles, close } = await gates(1, logger);
    const { gate, store } = handles[0]!;
    await redis.restart(); // a fresh process: no scripts, no command stats
    await waitFor(() => logger.lines.some((l) => l.startsWith('info') && l.includes('is back')), 10_000, 20);
    for (let i = 0; i < 5; i++) expect(gate.admit({}, Date.now())).toEqual(ADMITTED);
    const reset = store.resetUsage();
    gate.admit({}, Date.now());
    expect((await reset).requests).toBe(5);
    expect((await store.usage()).requests).toBe(1);
    expect(redis.cli('INFO', 'commandstats')).not.toMatch(/cmdstat_evalsha:.*failed_calls=[1-9]/);
    await close();
  });

  it('a command sent between counts of one turn closes the open call, so a reset is not undone', async () => {
    const { handles, close } = await gates(1);
    const { gate, store } = handles[0]!;
    // Redis holds both scripts first: a call by hash that it refused would be sent again a round trip later.
    gate.admit({}, Date.now());
    await store.resetUsage();
    for (let i = 0; i < 5; i++) gate.admit({}, Date.now());
    const reset = store.resetUsage(); // sent after those five: they are counted, then zeroed
    for (let i = 0; i < 3; i++) gate.admit({}, Date.now()); // after the reset, in a call of their own
    expect((await reset).requests).toBe(5);
    expect((await store.usage()).requests).toBe(3);
    await new Promise((done) => setImmediate(done));
    gate.admit({}, Date.now());
    expect((await store.usage()).requests).toBe(4);
    await close();
  });

  it('a request with something to decide waits for the store, as does every one under an audit', async () => {
    const { handles, close } = await gates(1);
    const gate = handles[0]!.gate;
    for (const limits of [{ monthlyQuota: 10 }, { rateLimit: { requests: 10, windowMs: 60_000 } }] as LimitsConfig[]) {
      const verdict = gate.admit(limits, Date.now());
      expect(verdict).toBeInstanceOf(Promise);
      expect((await verdict).outcome).toBe('admitted');
    }
    await close();
    vi.stubEnv('MOCKAPI_LIMIT_AUDIT', '100');
    const audited = await gates(1);
    const verdict = audited.handles[0]!.gate.admit({}, Date.now());
    expect(verdict).toBeInstanceOf(Promise);
    expect(await verdict).toEqual(ADMITTED);
    expect((await audited.handles[0]!.store.usage()).requests).toBe(1);
    await audited.close();
  });

  it('closed: a Redis that answers reads but refuses writes: admitted and counted here, through the script until it takes writes again; a limit gets 503', async () => {
    const logger = captureLogger();
    const { handles, close } = await gates(1, logger);
    const { gate, store } = handles[0]!;
    const limits: LimitsConfig = { storeDown: 'closed' };
    const verdicts: LimitVerdict[] = [];
    redis.cli('CONFIG', 'SET', 'maxmemory', '1'); // full: every write refused (OOM), reads answered
    try {
      verdicts.push(gate.admit(limits, Date.now()) as LimitVerdict); // at once; its count is refused
      await waitFor(() => logger.lines.some((l) => l.startsWith('warn') && l.includes('OOM')), 5_000, 20);
      // A read that Redis answers (the inspector's gauges) does not make the next request skip the script.
      expect((await gate.usage(limits, Date.now())).reachable).toBe(true);
      const through = gate.admit(limits, Date.now());
      expect(through).toBeInstanceOf(Promise);
      // Redis refuses the script too: nothing to decide, so admitted all the same, counted here.
      verdicts.push(await through);
      // A limit to decide: storeDown closed answers 503, as before.
      expect(await gate.admit({ ...limits, monthlyQuota: 1000 }, Date.now())).toEqual({
        outcome: 'store_unavailable',
        rate: undefined,
        retryAfterSeconds: 1,
      });
    } finally {
      redis.cli('CONFIG', 'SET', 'maxmemory', '0');
    }
    // Through the script until Redis admits one there; then at once again.
    await waitFor(
      async () => {
        const verdict = gate.admit(limits, Date.now());
        verdicts.push(await verdict);
        return !(verdict instanceof Promise);
      },
      5_000,
      20,
    );
    expect(verdicts).toEqual(Array(verdicts.length).fill(ADMITTED));
    // Every admitted request counted once: those counted here were added when Redis took writes.
    const admitted = verdicts.length;
    await waitFor(async () => (await store.usage()).requests === admitted, 5_000, 50).catch(() => {});
    expect((await store.usage()).requests).toBe(admitted);
    await close();
  });

  it.each(['closed', 'open'] as const)(
    '%s: requests admitted while Redis hangs are counted once, though Redis runs their count when it resumes',
    async (storeDown) => {
      const logger = captureLogger();
      const { handles, close } = await gates(1, logger, 1000);
      const { gate, store } = handles[0]!;
      const limits: LimitsConfig = { storeDown };
      expect(gate.admit(limits, Date.now())).toEqual(ADMITTED);
      await waitFor(async () => (await store.usage()).requests === 1, 5_000, 20);
      redis.pause();
      let hung: (LimitVerdict | Promise<LimitVerdict>)[] = [];
      try {
        // Admitted at once: nothing waits for Redis. Their count call gets no answer in time.
        hung = Array.from({ length: 4 }, () => gate.admit(limits, Date.now()));
        await waitFor(() => logger.lines.some((l) => l.includes('unreachable (no answer within 1000 ms)')), 5_000, 20);
      } finally {
        redis.resume(); // runs the count it had queued: the four are counted there after all
      }
      expect(hung).toEqual(Array(4).fill(ADMITTED));
      // A store that failed decides until it answers again: back with the next request's answer.
      let after = 0;
      await waitFor(
        async () => {
          // (one admitted without Redis's answer, which Redis ran after its deadline, is counted once)
          const ok = (await gate.admit(limits, Date.now())).outcome === 'admitted';
          if (ok) after++;
          return ok;
        },
        5_000,
        20,
      );
      await waitFor(() => logger.lines.some((l) => l.startsWith('info') && l.includes('is back')), 5_000, 20);
      // Each once: the four, kept here while it hung, are not added again on top of Redis's own count.
      const admitted = 1 + 4 + after;
      await waitFor(async () => (await store.usage()).requests === admitted, 5_000, 50).catch(() => {});
      expect((await store.usage()).requests).toBe(admitted);
      await close();
    },
  );
});
