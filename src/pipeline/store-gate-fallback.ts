/**
 * What a store gate (src/pipeline/store-gate.ts) decides alone while its store is away, under
 * `limits.storeDown: open` or for a request with nothing to decide: this server's own windows, month
 * and meters, the counts it keeps for the store's return, and the admissions whose settles stay here.
 */
import type { LimitsConfig } from '../config/types.js';
import { monthOf } from '../state/state-file.js';
import { createMemoryUsageStore, type UsageStore } from '../state/usage-store.js';
import type { EndpointWindow } from '../state/redis-store.js';
import { admitWithEndpoint } from './key-limits.js';
import { createGate, type LimitGate, type LimitVerdict } from './limits.js';
import type { Reserves, SettleToken } from './meters.js';
import { createRateLimiter, type RateLimiter } from './rate-limit.js';

/** The fallback of one store gate. */
export interface StoreFallback {
  readonly localUsage: UsageStore;
  readonly local: LimitGate;
  /** month → admitted locally while down, not yet in the store; '' → (negative) take-backs of countedAfterAll */
  readonly localCounts: Map<string, number>;
  /** Admissions counted by the fallback (storeDown: open): their settles go to it too. */
  readonly settledHere: WeakSet<SettleToken>;
  /** The verdict of this server's own limits, counted here (the store gate's while away, but for a 503 under `closed`). */
  admitHere(
    limits: LimitsConfig,
    now: number,
    endpoint: EndpointWindow | undefined,
    reserves: Reserves | undefined,
  ): LimitVerdict;
  /** Forgets the endpoints' windows (a reset of the rate limit). */
  resetWindows(): void;
}

/** Builds the fallback of one store gate. */
export function createStoreFallback(): StoreFallback {
  const localUsage = createMemoryUsageStore();
  const local = createGate(localUsage);
  const localCounts = new Map<string, number>();
  const settledHere = new WeakSet<SettleToken>();

  // The fallback's endpoint windows (storeDown: open), by route.
  let localWindows = new Map<string, RateLimiter>();
  function localWindow(route: string): RateLimiter {
    let limiter = localWindows.get(route);
    if (limiter === undefined) localWindows.set(route, (limiter = createRateLimiter()));
    return limiter;
  }

  function admitHere(
    limits: LimitsConfig,
    now: number,
    endpoint: EndpointWindow | undefined,
    reserves: Reserves | undefined,
  ): LimitVerdict {
    const verdict =
      endpoint === undefined
        ? local.admit(limits, now, reserves)
        : admitWithEndpoint(local, limits, now, localWindow(endpoint.route), endpoint.rateLimit, reserves);
    if (verdict.outcome === 'admitted') {
      const month = monthOf(now);
      localCounts.set(month, (localCounts.get(month) ?? 0) + 1);
    }
    if (verdict.settle !== undefined) settledHere.add(verdict.settle);
    return verdict;
  }

  return {
    localUsage,
    local,
    localCounts,
    settledHere,
    admitHere,
    resetWindows: () => void (localWindows = new Map()),
  };
}
