import type { Clock } from '../clock.js';
import type { LimitsConfig } from '../config/types.js';
import type { Logger } from '../logger.js';
import { createUsageStore, type UsageStore } from '../state.js';
import { createQuota } from './quota.js';
import { createRateLimiter, rateLimitHeaders } from './rate-limit.js';

/** Outcome of the rate-limit and quota steps (SPEC §3 steps 2 and 3), with the headers to send. */
export interface LimitVerdict {
  outcome: 'admitted' | 'rate_limited' | 'quota_exceeded';
  /** Flat `[name, value, …]`: RateLimit-* when a rate limit is set, Retry-After on a 429. */
  headers: string[];
}

/**
 * The rate-limit and quota steps together: decides and, only when admitted, counts the request
 * in both (a request refused by either step consumes neither). Synchronous, so a burst of
 * concurrent requests is decided one at a time and the limits are exact.
 */
export interface LimitGate {
  admit(limits: LimitsConfig, now: number): LimitVerdict;
}

export interface LimitGateHandle {
  gate: LimitGate;
  usage: UsageStore;
  /** Writes pending usage and stops the flush timer. */
  close(): Promise<void>;
}

const NO_HEADERS: string[] = [];
const ADMITTED_UNLIMITED: LimitVerdict = { outcome: 'admitted', headers: NO_HEADERS };

/** A gate whose counters live outside any config, so reloads keep them. */
export function createGate(usage: UsageStore): LimitGate {
  const rateLimiter = createRateLimiter();
  const quota = createQuota(usage);
  return {
    admit(limits, now) {
      const rate = rateLimiter.check(limits.rateLimit, now);
      if (rate !== undefined && !rate.admitted) {
        return { outcome: 'rate_limited', headers: rateLimitHeaders(rate, rate.retryAfterSeconds) };
      }
      const monthly = quota.check(limits.monthlyQuota, now);
      if (monthly.exceeded) {
        const headers = rate === undefined ? [] : rateLimitHeaders(rate);
        headers.push('Retry-After', String(monthly.retryAfterSeconds));
        return { outcome: 'quota_exceeded', headers };
      }
      const status = rateLimiter.record(now);
      quota.record(now);
      return status === undefined ? ADMITTED_UNLIMITED : { outcome: 'admitted', headers: rateLimitHeaders(status) };
    },
  };
}

/** Creates the gate over a usage store kept in `state` (a file) or in memory (`false`). */
export async function createLimitGate(options: { state: string | false; clock: Clock; logger: Logger }): Promise<LimitGateHandle> {
  const usage = await createUsageStore({
    file: options.state === false ? undefined : options.state,
    clock: options.clock,
    logger: options.logger,
  });
  return { gate: createGate(usage), usage, close: () => usage.close() };
}
