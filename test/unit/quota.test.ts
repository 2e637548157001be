import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQuota, nextMonthStart, secondsUntilNextMonth, type Quota } from '../../src/pipeline/quota.js';
import { monthOf } from '../../src/state/state-file.js';
import { createMemoryUsageStore, createUsageStore, type UsageStore } from '../../src/state/usage-store.js';

const at = (iso: string): number => Date.parse(iso);

describe('createQuota', () => {
  it('counts every recorded request and refuses once `monthlyQuota` were counted', () => {
    const quota = createQuota();
    const now = at('2026-11-15T12:00:00Z');
    for (let i = 0; i < 3; i++) {
      expect(quota.check(3, now)).toMatchObject({ exceeded: false, used: i, remaining: 3 - i, retryAfterSeconds: 0 });
      expect(quota.record(now)).toBe(i + 1);
    }
    expect(quota.check(3, now)).toEqual({
      exceeded: true,
      month: '2026-11',
      used: 3,
      limit: 3,
      remaining: 0,
      // 15.5 days until 2026-12-01T00:00:00Z
      retryAfterSeconds: 15 * 86_400 + 12 * 3_600,
    });
  });

  it('exceeds() says what check().exceeded says, with or without a quota, across a month change', () => {
    const quota = createQuota();
    const start = at('2026-11-30T23:59:59Z');
    for (let i = 0; i < 8; i++) {
      const now = start + i * 300; // crosses into December at i = 4
      for (const limit of [undefined, 0, 1, 2, 3, 5])
        expect(quota.exceeds(limit, now)).toBe(quota.check(limit, now).exceeded);
      quota.record(now);
    }
  });

  it('check() counts nothing', () => {
    const quota = createQuota();
    const now = at('2026-11-15T12:00:00Z');
    for (let i = 0; i < 5; i++) quota.check(1, now);
    expect(quota.check(1, now)).toMatchObject({ exceeded: false, used: 0 });
  });

  it('counts without a configured quota, so a quota added later applies to this month', () => {
    const quota = createQuota();
    const now = at('2026-11-15T12:00:00Z');
    quota.record(now);
    quota.record(now);
    expect(quota.check(undefined, now)).toEqual({
      exceeded: false,
      month: '2026-11',
      used: 2,
      limit: undefined,
      remaining: undefined,
      retryAfterSeconds: 0,
    });
    expect(quota.check(2, now)).toMatchObject({ exceeded: true, remaining: 0 });
  });

  it('a quota lowered below the count is exceeded at once; raising it again restores what remains', () => {
    const quota = createQuota();
    const now = at('2026-11-15T12:00:00Z');
    for (let i = 0; i < 10; i++) quota.record(now);
    expect(quota.check(4, now)).toMatchObject({ exceeded: true, used: 10, remaining: 0 });
    expect(quota.check(12, now)).toMatchObject({ exceeded: false, used: 10, remaining: 2 });
  });

  it.each([
    { last: '2026-11-30T23:59:59.999Z', next: '2026-12-01T00:00:00.000Z', month: '2026-12' },
    { last: '2026-12-31T23:59:59.999Z', next: '2027-01-01T00:00:00.000Z', month: '2027-01' },
    { last: '2028-02-29T23:59:59.999Z', next: '2028-03-01T00:00:00.000Z', month: '2028-03' },
  ])('starts again at 0 when the month changes: $last → $next', ({ last, next, month }) => {
    const quota = createQuota();
    quota.record(at(last));
    quota.record(at(last));
    expect(quota.check(2, at(last))).toMatchObject({ exceeded: true, used: 2, retryAfterSeconds: 1 });
    expect(quota.check(2, at(next))).toMatchObject({ exceeded: false, used: 0, remaining: 2, month });
    expect(quota.record(at(next))).toBe(1);
  });

  it('uses the UTC month, not the local one', () => {
    const quota = createQuota();
    // 2026-11-30T20:00 in New York, already December in UTC.
    const now = at('2026-11-30T20:00:00-05:00');
    expect(quota.check(1, now).month).toBe('2026-12');
  });

  it('wraps a given usage store', () => {
    const store = createMemoryUsageStore();
    const now = at('2026-11-15T12:00:00Z');
    store.increment(now);
    const quota = createQuota(store);
    expect(quota.check(1, now).exceeded).toBe(true);
    quota.record(now);
    expect(store.count(now)).toBe(2);
  });
});

describe('two servers sharing one state file (SPEC §5.3, §5.4)', () => {
  const NOW = at('2026-11-15T12:00:00Z');
  const N = 10;
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mockapi-quota-'));
    file = join(dir, '.mockapi', 'state.json');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function servers(): Promise<{ store: UsageStore; quota: Quota }[]> {
    const make = async () => {
      const store = await createUsageStore({ file, clock: () => NOW, flushIntervalMs: 60_000 });
      return { store, quota: createQuota(store) };
    };
    return [await make(), await make()];
  }

  /** What the gate does for one request: admitted (and counted) unless over the quota. */
  const admit = (server: { quota: Quota }): boolean => {
    if (server.quota.exceeds(N, NOW)) return false;
    server.quota.record(NOW);
    return true;
  };
  const inFile = async () =>
    (JSON.parse(await readFile(file, 'utf8')) as { usage: { requests: number } }).usage.requests;

  it('admit exactly monthlyQuota between them when each sees the other’s writes before deciding again', async () => {
    const [a, b] = await servers();
    let admitted = 0;
    for (let i = 0; i < 3 * N; i++) {
      const [self, other] = i % 2 === 0 ? [a!, b!] : [b!, a!];
      if (!admit(self)) continue;
      admitted++;
      await self.store.flush(); // the write…
      await other.store.reconcile(); // …that the other's watcher reports
    }
    expect(admitted).toBe(N);
    expect(await inFile()).toBe(N);
    expect([admit(a!), admit(b!)]).toEqual([false, false]);
  });

  it('between writes each decides on its own view: at most monthlyQuota each, and every admitted request is in the file', async () => {
    const [a, b] = await servers();
    let admitted = 0;
    for (let i = 0; i < 3 * N; i++) if (admit(i % 2 === 0 ? a! : b!)) admitted++;
    // The bound: N plus what the other admitted that this one had not seen — here all of it.
    expect(admitted).toBe(2 * N);
    await a!.store.flush();
    await b!.store.flush();
    await a!.store.reconcile();
    expect(await inFile()).toBe(2 * N); // nothing lost
    expect([a!.store.count(NOW), b!.store.count(NOW)]).toEqual([2 * N, 2 * N]);
    expect([admit(a!), admit(b!)]).toEqual([false, false]);
  });
});

describe('secondsUntilNextMonth', () => {
  it.each([
    { now: '2026-11-30T23:59:59.999Z', seconds: 1 },
    { now: '2026-11-30T23:59:59.000Z', seconds: 1 },
    { now: '2026-11-30T23:59:58.800Z', seconds: 2 },
    { now: '2026-11-30T00:00:00.000Z', seconds: 86_400 },
    { now: '2026-12-31T23:00:00.000Z', seconds: 3_600 },
    { now: '2026-02-01T00:00:00.000Z', seconds: 28 * 86_400 },
    { now: '2028-02-01T00:00:00.000Z', seconds: 29 * 86_400 },
  ])('$now → $seconds s (rounded up, at least 1)', ({ now, seconds }) => {
    expect(secondsUntilNextMonth(at(now))).toBe(seconds);
  });

  it('nextMonthStart crosses the year', () => {
    expect(new Date(nextMonthStart(at('2026-12-15T00:00:00Z'))).toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });

  it('monthOf formats the UTC month with two digits', () => {
    expect(monthOf(at('2027-01-01T00:00:00Z'))).toBe('2027-01');
    expect(monthOf(at('2026-12-31T23:59:59.999Z'))).toBe('2026-12');
  });
});
