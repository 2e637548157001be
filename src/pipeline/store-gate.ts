import type { LimitsConfig } from '../config/types.js';
import type { Logger } from '../logger.js';
import { monthOf } from '../state/state-file.js';
import { createMemoryUsageStore } from '../state/usage-store.js';
import { redactStoreUrl } from '../config/store-url.js';
import { openLimitStore, type AdmitReply, type LimitStore, type LimitStoreOptions } from '../state/redis-store.js';
import { createGate, type LimitParts, type LimitVerdict, type SharedUsage, type StoreLimitGate } from './limits.js';

/** Retry-After of that 503: the store is retried at least once a second. */
const STORE_UNAVAILABLE: LimitVerdict = { outcome: 'store_unavailable', rate: undefined, retryAfterSeconds: 1 };
const OUTCOMES = ['admitted', 'rate_limited', 'quota_exceeded'] as const;

export interface StoreGateOptions {
  url: string;
  project: string;
  logger: Logger;
  /** `limits.storeDown` until the first request says (for the message when Redis is away at start). */
  storeDown?: 'closed' | 'open';
  /** For tests: the Redis timeouts of {@link LimitStoreOptions}. */
  commandTimeoutMs?: number;
  connectWaitMs?: number;
}

export interface StoreGateHandle {
  gate: StoreLimitGate;
  store: LimitStore;
  /** Adds what was counted locally to the store when it can, then disconnects. */
  close(): Promise<void>;
}

function toVerdict(reply: AdmitReply): LimitVerdict {
  const [outcome, limit, remaining, resetSeconds, retryAfterSeconds] = reply;
  return {
    outcome: OUTCOMES[outcome] ?? 'admitted',
    rate: limit === 0 ? undefined : { limit, remaining, resetSeconds },
    retryAfterSeconds,
  };
}

/**
 * The rate-limit and quota steps through a shared store: one atomic script per request decides and
 * counts in Redis, with Redis's clock (the `now` given is not used). While the store cannot be
 * reached, `limits.storeDown` (read per request, so a reload changes it) says what happens: `closed`
 * answers 503; `open` falls back to this server's own in-process window and count — limits then hold
 * per server, not across them — and adds what it counted to the shared month when the store is back.
 * The loss and the return are logged once each.
 */
export async function createStoreGate(options: StoreGateOptions): Promise<StoreGateHandle> {
  const { logger } = options;
  const where = redactStoreUrl(options.url);
  const localUsage = createMemoryUsageStore();
  const local = createGate(localUsage);
  const localCounts = new Map<string, number>(); // month → admitted locally while down, not yet in the store
  let policy: 'closed' | 'open' = options.storeDown ?? 'closed';
  let down = false;
  let store: LimitStore | undefined;

  function markDown(reason: string): void {
    if (down) return;
    down = true;
    const then = policy === 'open'
      ? 'admitting requests under this server\'s own limits and counting them locally (limits.storeDown: open)'
      : 'mock requests get 503 store_unavailable (limits.storeDown: closed)';
    logger.warn(`limit store ${where} unreachable (${reason}): ${then} until it is back`);
  }

  function markUp(): void {
    if (!down) return;
    down = false;
    logger.info(`limit store ${where} is back: limits are shared again`);
    addLocalCounts();
  }

  /** Moves the local counts into the store; what fails to go stays for the next return. */
  function addLocalCounts(): Promise<unknown> {
    const moves = [...localCounts].map(([month, n]) => {
      localCounts.delete(month);
      return store?.addUsage(month, n).catch(() => localCounts.set(month, (localCounts.get(month) ?? 0) + n));
    });
    return Promise.all(moves);
  }

  function unavailable(limits: LimitsConfig, now: number): LimitVerdict {
    if (policy === 'closed') return STORE_UNAVAILABLE;
    const verdict = local.admit(limits, now);
    if (verdict.outcome === 'admitted') {
      const month = monthOf(now);
      localCounts.set(month, (localCounts.get(month) ?? 0) + 1);
    }
    return verdict;
  }

  store = await openLimitStore({
    url: options.url,
    project: options.project,
    commandTimeoutMs: options.commandTimeoutMs,
    connectWaitMs: options.connectWaitMs,
    onDown: markDown,
    onUp: markUp,
  });
  const shared = store;

  let lastRate: LimitVerdict['rate'];
  let known: { month: string; requests: number } | undefined; // the month as this server last read it
  let reading: Promise<SharedUsage> | undefined; // one status read at a time: readers join it

  /** While the store does not answer: what this server last knew of it, and what it counted alone since. */
  function lastKnown(limits: LimitsConfig, now: number): SharedUsage {
    const month = known?.month ?? monthOf(now);
    const requests = (known?.month === month ? known.requests : 0) + (localCounts.get(month) ?? 0);
    // `open` admits under the fallback window now; `closed` admits nothing, so the shared window as last seen.
    const rate = limits.rateLimit === undefined ? undefined : policy === 'open' ? local.rateStatus(limits, now) : (lastRate ?? local.rateStatus(limits, now));
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

  const gate: StoreLimitGate = {
    shared: true,
    where,
    get reachable() {
      return !down;
    },
    usage(limits, now) {
      policy = limits.storeDown ?? 'closed';
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
      }
    },
    async admit(limits, now) {
      policy = limits.storeDown ?? 'closed';
      // Not connected: answer now, without waiting for a command to fail.
      if (!shared.ready) {
        markDown('not connected');
        return unavailable(limits, now);
      }
      try {
        const verdict = toVerdict(await shared.admit(limits));
        lastRate = verdict.rate;
        markUp();
        return verdict;
      } catch (err) {
        markDown((err as Error).message);
        return unavailable(limits, now);
      }
    },
  };
  return {
    gate,
    store: shared,
    async close() {
      if (localCounts.size > 0 && shared.ready) await addLocalCounts();
      await shared.close();
    },
  };
}
