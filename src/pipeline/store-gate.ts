import type { LimitsConfig } from '../config/types.js';
import { keepPending, takePending } from './store-gate-pending.js';
import { monthOf } from '../state/state-file.js';
import { redactStoreUrl } from '../config/store-url.js';
import { openLimitStore, type AdmitReply, type EndpointWindow, type LimitStore } from '../state/redis-store.js';
import type { LimitParts, LimitVerdict, SharedUsage, StoreLimitGate } from './limits.js';
import type { Reserves } from './meters.js';
import { createStoreFallback } from './store-gate-fallback.js';
import { limitStoreOptions, type StoreGateHandle, type StoreGateOptions } from './store-gate-options.js';
import { limitsDecide, requestDecides, STORE_UNAVAILABLE, toVerdict, whileAway } from './store-gate-verdict.js';

export type { StoreGateHandle, StoreGateOptions } from './store-gate-options.js';

/** Why requests were counted here under `storeDown: closed`: admitted with nothing to decide. */
const COUNTED_HERE = 'with no limit to decide';

/**
 * The rate-limit and quota steps through a shared store: one atomic script per request decides and
 * counts in Redis, with Redis's clock (the `now` given is not used) — the key's window, the month and,
 * for an endpoint with limits of its own, that endpoint's window for this key. While the store cannot
 * be reached, `limits.storeDown` (read per request, so a reload changes it) says what happens to a
 * request with a limit to decide: `closed` answers 503; `open` falls back to this server's own
 * in-process windows and count — limits then hold per server, not across them. A request with
 * nothing to decide is admitted either way. What was admitted here is added to the shared month
 * when the store is back.
 * The loss and the return are logged once each.
 */
export async function createStoreGate(options: StoreGateOptions): Promise<StoreGateHandle> {
  const { logger } = options;
  const where = redactStoreUrl(options.url);
  const { localUsage, local, localCounts, settledHere, admitHere, resetWindows } = createStoreFallback();
  let policy: 'closed' | 'open' = options.storeDown ?? 'closed';
  // Whether a limit to decide was seen (in the config at start, or in a request since): for the line below.
  let limited = options.limited ?? true;
  let down = false;
  let store: LimitStore | undefined;

  function markDown(reason: string): void {
    if (down) return;
    down = true;
    logger.warn(`limit store ${where} unreachable (${reason}): ${whileAway(policy, limited)} until it is back`);
  }

  function markUp(): void {
    if (!down) return;
    down = false;
    logger.info(`limit store ${where} is back: limits are shared again`);
    addLocalCounts();
  }

  let moving: Promise<void> = Promise.resolve(); // the latest addLocalCounts, for close() to wait on

  /** Moves the local counts into the store; what fails to go stays for the next return. */
  function addLocalCounts(): Promise<void> {
    const moves = [...localCounts].map(([month, n]) => {
      localCounts.delete(month);
      if (n === 0) return undefined;
      return store?.addUsage(month, n).catch(() => localCounts.set(month, (localCounts.get(month) ?? 0) + n));
    });
    moving = Promise.all([moving, ...moves]).then(() => undefined); // (no chain of results kept)
    return moving;
  }

  /**
   * A request answered without the store's verdict (503, or the local one with `open`) that the
   * store did count after all: a command that got no answer in time and ran when Redis resumed. Its
   * answer stands, so the store's count of it is taken back — with the local counts, so that it
   * waits with them while the store is away. (Where the reply never comes — the connection broke —
   * it cannot be known whether Redis ran it; it then stays counted.)
   */
  function countedAfterAll(reply: AdmitReply): void {
    if (reply[0] !== 0) return; // refused by the store: nothing counted there
    // '' is the store's month by its own clock, as the script counted it.
    localCounts.set('', (localCounts.get('') ?? 0) - 1);
    if (!down && shared.ready) void addLocalCounts();
  }

  const fromLastStop = await takePending(options, where, logger);
  for (const [month, n] of fromLastStop) localCounts.set(month, (localCounts.get(month) ?? 0) + n);

  store = await openLimitStore(limitStoreOptions(options, markDown, markUp));
  const shared = store;
  // Connected at once: no return from down will add what the last stop kept, so add it now.
  if (fromLastStop.size > 0 && shared.ready) void addLocalCounts();

  let lastRate: LimitVerdict['rate'];
  let known: { month: string; requests: number } | undefined; // the month as this server last read it
  let reading: Promise<SharedUsage> | undefined; // one status read at a time: readers join it

  /** While the store does not answer: what this server last knew of it, and what it counted alone since. */
  function lastKnown(limits: LimitsConfig, now: number): SharedUsage {
    const month = known?.month ?? monthOf(now);
    const requests = (known?.month === month ? known.requests : 0) + (localCounts.get(month) ?? 0);
    // `open` admits under the fallback window now; `closed` admits nothing, so the shared window as last seen.
    const rate =
      limits.rateLimit === undefined
        ? undefined
        : policy === 'open'
          ? local.rateStatus(limits, now)
          : (lastRate ?? local.rateStatus(limits, now));
    return { month, requests, rate, reachable: false };
  }

  async function read(limits: LimitsConfig, now: number): Promise<SharedUsage> {
    try {
      const [month, requests, limit, remaining, resetSeconds] = await shared.status(limits);
      known = { month, requests };
      lastRate = limit === 0 ? undefined : { limit, remaining, resetSeconds };
      markUp();
      return { month, requests, rate: lastRate, reachable: true };
    } catch (err) {
      markDown((err as Error).message);
      return lastKnown(limits, now);
    }
  }

  // Count-only admissions (nothing to decide): the time of the latest, for the month of a count that failed.
  let countedAt = 0;
  // A count failed: requests are decided through the script until one is admitted there (a Redis
  // that answers reads but refuses writes — full, or a replica — answers 503 under `closed` again).
  let countFailed = false;
  function counted(n: number, outcome: 'counted' | 'failed' | 'late', reason?: string): void {
    if (outcome === 'counted') return markUp();
    if (outcome === 'failed') {
      // Admitted already: counted here until the store is back, as `storeDown: open` counts.
      const month = monthOf(countedAt);
      localCounts.set(month, (localCounts.get(month) ?? 0) + n);
      countFailed = true;
      return markDown(reason ?? 'a count failed');
    }
    // Counted by Redis after all (it hung, then ran the call): taken back from what waits here.
    localCounts.set('', (localCounts.get('') ?? 0) - n);
    if (!down && shared.ready) void addLocalCounts();
  }

  /** The verdict without the store: a 503 under `closed` where there is a limit to decide, else this server's own. */
  function away(
    limits: LimitsConfig,
    now: number,
    endpoint: EndpointWindow | undefined,
    reserves: Reserves | undefined,
  ): LimitVerdict {
    if (policy === 'closed' && requestDecides(limits, endpoint, reserves)) return STORE_UNAVAILABLE;
    return admitHere(limits, now, endpoint, reserves);
  }

  /** The store's verdict on a request with something to decide (a window, the quota, a meter). */
  async function decide(
    limits: LimitsConfig,
    now: number,
    endpoint: EndpointWindow | undefined,
    reserves: Reserves | undefined,
  ): Promise<LimitVerdict> {
    try {
      const verdict = toVerdict(await shared.admit(limits, countedAfterAll, endpoint, reserves), limits, reserves);
      // The key's window as last seen (an endpoint's headers are not the key's).
      if (endpoint === undefined) lastRate = verdict.rate;
      if (verdict.outcome === 'admitted') countFailed = false; // counted there: Redis takes writes again
      markUp();
      return verdict;
    } catch (err) {
      markDown((err as Error).message);
      return away(limits, now, endpoint, reserves);
    }
  }

  const gate: StoreLimitGate = {
    shared: true,
    where,
    get reachable() {
      return !down;
    },
    usage(limits, now) {
      policy = limits.storeDown ?? 'closed';
      if (limitsDecide(limits)) limited = true;
      if (!shared.ready) {
        markDown('not connected');
        return Promise.resolve(lastKnown(limits, now));
      }
      // An inspector's polls and events, and a hanging Redis, must not pile up reads.
      reading ??= read(limits, now).finally(() => (reading = undefined));
      return reading;
    },
    async reset(parts) {
      try {
        // Not connected: fail now (the offline queue is off), with a reason that says so.
        if (!shared.ready) throw new Error('not connected');
        if (parts.usage) await shared.resetUsage();
        if (parts.rateLimit) await shared.resetWindow();
        await shared.resetMeters(parts.rateLimit, parts.usage);
      } catch (err) {
        markDown((err as Error).message);
        throw new Error(`the shared limit store ${where} cannot be reached (${(err as Error).message})`);
      }
      reading = undefined; // a read sent before the reset must not answer for after it
    },
    async setUsage(requests, now) {
      let month: string;
      try {
        if (!shared.ready) throw new Error('not connected');
        // The month by Redis's clock, as every count of the store.
        ({ month } = await shared.resetUsage());
        if (requests > 0) await shared.addUsage(month, requests);
      } catch (err) {
        markDown((err as Error).message);
        throw new Error(`the shared limit store ${where} cannot be reached (${(err as Error).message})`);
      }
      reading = undefined;
      localCounts.clear(); // counted before: not to be added to the month just set
      localUsage.reset(now);
      if (known !== undefined) known = { month, requests };
    },
    forget(parts: LimitParts, now) {
      if (parts.usage) {
        localCounts.clear(); // counted before the reset: not to be added to the zeroed month
        localUsage.reset(now);
        if (known !== undefined) known = { month: known.month, requests: 0 };
      }
      if (parts.rateLimit) {
        lastRate = undefined;
        local.resetRateLimit();
        resetWindows();
      }
      local.meters.clear(parts.rateLimit, parts.usage);
    },
    admit(limits, now, endpoint, reserves) {
      policy = limits.storeDown ?? 'closed';
      const decides = requestDecides(limits, endpoint, reserves);
      if (decides) limited = true;
      // Not connected: answer now, without waiting for a command to fail.
      if (!shared.ready) {
        markDown('not connected');
        return away(limits, now, endpoint, reserves);
      }
      // Nothing to decide, the store answering: admitted now, counted in this turn's count call. (A
      // store that failed its last command, or a count, goes through the script as before, so its
      // return is seen; while it fails, such a request is admitted and counted here all the same.)
      if (!down && !countFailed && !decides) {
        countedAt = now;
        if (shared.count(counted)) {
          lastRate = undefined;
          return { outcome: 'admitted', rate: undefined, retryAfterSeconds: 0 };
        }
      }
      return decide(limits, now, endpoint, reserves);
    },
    async settle(token, deltas) {
      if (settledHere.has(token)) return local.meters.settle(token, deltas);
      try {
        await shared.settle(token.meters, { at: token.at, month: token.month, deltas });
      } catch (err) {
        markDown((err as Error).message);
        throw new Error(`the shared limit store ${where} cannot be reached (${(err as Error).message})`);
      }
    },
    async meterStatus(limits, now) {
      const meters = limits.meters ?? [];
      if (meters.length === 0) return [];
      if (!shared.ready) return local.meters.status(meters, now);
      try {
        const { used, resetMs } = await shared.meterStatus(meters);
        markUp();
        return meters.map((meter, i) => ({ meter, used: used[i]!, resetMs: resetMs[i]! }));
      } catch (err) {
        markDown((err as Error).message);
        return local.meters.status(meters, now);
      }
    },
    async setMeter(meter, units) {
      try {
        if (!shared.ready) throw new Error('not connected');
        await shared.setMeter(meter, units);
      } catch (err) {
        markDown((err as Error).message);
        throw new Error(`the shared limit store ${where} cannot be reached (${(err as Error).message})`);
      }
    },
  };
  return {
    gate,
    store: shared,
    async close() {
      await moving;
      if (localCounts.size > 0 && shared.ready) await addLocalCounts();
      await shared.close();
      // What is left is counted here and not in the store; a take-back that could not be made stays
      // undone (the request stays counted once too many rather than an admitted one not at all).
      for (const [month, n] of localCounts) if (n <= 0) localCounts.delete(month);
      if (localCounts.size > 0)
        await keepPending(options, where, localCounts, logger, policy === 'open' ? undefined : COUNTED_HERE);
    },
  };
}
