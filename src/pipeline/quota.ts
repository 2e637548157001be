import { monthOf } from '../state/state-file.js';
import { createMemoryUsageStore, type UsageStore } from '../state/usage-store.js';

/** The monthly-quota step's verdict for one request, before it is counted. */
export interface QuotaDecision {
  exceeded: boolean;
  /** Calendar month (UTC) of the request, `YYYY-MM`. */
  month: string;
  /** Requests counted this month so far, not including this one. */
  used: number;
  /** `limits.monthlyQuota`, or `undefined` when no quota is configured. */
  limit: number | undefined;
  /** Requests left this month (0 when exceeded); `undefined` when no quota is configured. */
  remaining: number | undefined;
  /** `Retry-After` for the 429: whole seconds until the next month begins (UTC), at least 1. 0 when not exceeded. */
  retryAfterSeconds: number;
}

/**
 * The monthly quota step. Created once per server; the count lives in the usage store,
 * outside the config, so it survives reloads (and restarts when the store has a file).
 */
export interface Quota {
  /** Says whether a request at `now` is over `monthlyQuota` (`undefined` = no quota). Counts nothing. */
  check(monthlyQuota: number | undefined, now: number): QuotaDecision;
  /** `check(monthlyQuota, now).exceeded` without building the decision, for the usual request. */
  exceeds(monthlyQuota: number | undefined, now: number): boolean;
  /** Counts a request at `now` in its month; returns this month's new count. */
  record(now: number): number;
}

/**
 * Creates the quota step over `store` (memory only when omitted). Every request admitted by the
 * rate limiter is recorded, even with no quota configured, so that `mockapi usage` shows real
 * numbers and a quota added by a reload applies to what this month already used. A quota lowered
 * below the count is exceeded at once; what was counted stays counted. The count restarts at 0 when
 * the month (UTC) changes — computed from the time given, so no timer runs until the month's end.
 */
export function createQuota(store: UsageStore = createMemoryUsageStore()): Quota {
  return {
    check(monthlyQuota, now) {
      const used = store.count(now);
      const month = monthOf(now);
      if (monthlyQuota === undefined) {
        return { exceeded: false, month, used, limit: undefined, remaining: undefined, retryAfterSeconds: 0 };
      }
      const exceeded = used >= monthlyQuota;
      return {
        exceeded,
        month,
        used,
        limit: monthlyQuota,
        remaining: Math.max(0, monthlyQuota - used),
        retryAfterSeconds: exceeded ? secondsUntilNextMonth(now) : 0,
      };
    },
    exceeds: (monthlyQuota, now) => monthlyQuota !== undefined && store.count(now) >= monthlyQuota,
    record: (now) => store.increment(now),
  };
}

/** 00:00:00.000 UTC on the first day of the month after `now`, in ms since the epoch. */
export function nextMonthStart(now: number): number {
  const date = new Date(now);
  const next = new Date(0); // not Date.UTC, which takes years 0–99 for 1900–1999
  next.setUTCFullYear(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  return next.getTime();
}

/** Whole seconds, rounded up and at least 1, from `now` until the next month begins (UTC). */
export function secondsUntilNextMonth(now: number): number {
  return Math.max(1, Math.ceil((nextMonthStart(now) - now) / 1000));
}
