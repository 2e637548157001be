import type { Clock } from '../clock.js';
import type { LimitsConfig, MeterConfig } from '../config/types.js';
import type { Logger } from '../logger.js';
import { createMemoryUsageStore, createUsageStore, type UsageStore } from '../state/usage-store.js';
import { storePendingFile } from '../state/store-pending.js';
import { monthOf } from '../state/state-file.js';
import type { EndpointWindow } from '../state/redis-store.js';
import { keyStateFile } from '../state/state-file.js';

const forKey = (file: string, keyName: string | undefined): string =>
  keyName === undefined ? file : keyStateFile(file, keyName);
import { createQuota } from './quota.js';
import {
  appendRateLimitHeaders,
  createRateLimiter,
  type RateLimitDecision,
  type RateLimitStatus,
} from './rate-limit.js';
import {
  createMeterLedger,
  type MeterLedger,
  type MeterRefusal,
  type MeterStatus,
  type Reserves,
  type SettleToken,
} from './meters.js';

/**
 * Outcome of the rate-limit and quota steps (steps 2 and 3), with what the headers say.
 * Numbers rather than a header list, so the usual answer can fill its precomputed header list
 * (compile.ts) instead of building and concatenating arrays per request; see `limitHeaders`.
 */
export interface LimitVerdict {
  /** `store_unavailable`: the shared store cannot be reached, `limits.storeDown` is `closed` and the request has a limit to decide. */
  outcome: 'admitted' | 'rate_limited' | 'quota_exceeded' | 'store_unavailable';
  /** The RateLimit-* values to send; undefined when no rate limit is configured. */
  rate: RateLimitStatus | undefined;
  /** Retry-After on a 429 (whole seconds, at least 1); 0 when admitted (and for a reserve that can never fit). */
  retryAfterSeconds: number;
  /** The meters of the request's limits as they stand after it (its reserve counted when admitted); absent without meters. */
  meters?: readonly MeterStatus[];
  /** The meter that refused the request (outcome `rate_limited`: its window, or a reserve that can never fit; `quota_exceeded`: spent). */
  meter?: MeterRefusal;
  /** What the settle after the answer needs; present when the request was admitted with a reserve on some meter. */
  settle?: SettleToken;
}

/** The 503 body of a mock request while the shared store cannot be reached and `limits.storeDown` is `closed`. */
export const BODY_STORE_UNAVAILABLE = Buffer.from(
  JSON.stringify({
    error: 'store_unavailable',
    message: 'The shared limit store (Redis) cannot be reached; try again shortly',
  }),
);

/** The verdict as a flat `[name, value, …]` list: RateLimit-* when a rate limit is set, Retry-After on a 429. */
export function limitHeaders(verdict: LimitVerdict): string[] {
  return appendLimitHeaders([], verdict);
}

/** Adds the limit headers of `verdict` to `headers` (a list made for one answer) and returns it. */
export function appendLimitHeaders(headers: string[], verdict: LimitVerdict): string[] {
  if (verdict.rate !== undefined) appendRateLimitHeaders(headers, verdict.rate);
  if (verdict.retryAfterSeconds > 0) headers.push('Retry-After', String(verdict.retryAfterSeconds));
  return headers;
}

/**
 * The rate-limit and quota steps together: decides and, only when admitted, counts the request
 * in both (a request refused by either step consumes neither). Synchronous, so a burst of
 * concurrent requests is decided one at a time and the limits are exact.
 */
export interface LimitGate {
  /** False: this process decides, at once. */
  readonly shared: false;
  /** `reserves`: what the request reserves on each of `limits.meters` (its endpoint's cost); absent: it asks no meter. */
  admit(limits: LimitsConfig, now: number, reserves?: Reserves): LimitVerdict;
  /** The meters' counts (usage, settle, reset, `POST /__mockapi/usage`). */
  readonly meters: MeterLedger;
  /** What the RateLimit-* headers would say at `now`, counting nothing (for `GET /__mockapi/usage`). */
  rateStatus(limits: LimitsConfig, now: number): RateLimitStatus | undefined;
  /** Empties the rate window (`POST /__mockapi/reset`, a virtual clock set back). */
  resetRateLimit(): void;
}

/**
 * The same steps through a shared store: a round trip to Redis, so the verdict comes
 * later; Redis decides one request at a time, so the limits stay exact across servers.
 */
export interface StoreLimitGate {
  /** True: a shared store decides, after a round trip. */
  readonly shared: true;
  /** The store's URL, password hidden. */
  readonly where: string;
  /** Whether the store answered its last command (a request's check, a usage read or a reset). */
  readonly reachable: boolean;
  /**
   * With `endpoint`, that endpoint's own window for this key is decided in the same atomic step:
   * a request it refuses consumes nothing of the key's window or month, and one the key's limits
   * refuse consumes nothing of it; the headers describe the window closer to full. A request with
   * nothing to decide (no window, quota or meter) is admitted at once, its count sent without
   * waiting; so is any request while the store is not connected (`storeDown` decides where there
   * is a limit to decide; with none, it is admitted and counted here until the store is back).
   */
  admit(
    limits: LimitsConfig,
    now: number,
    endpoint?: EndpointWindow,
    reserves?: Reserves,
  ): LimitVerdict | Promise<LimitVerdict>;
  /** Corrects an admission's meters by `deltas` (settle − reserve), in one more script call; rejects when the store cannot be reached. */
  settle(token: SettleToken, deltas: readonly number[]): Promise<void>;
  /** The shared meters of `limits` (`usage`), counting nothing; never rejects (the last known figures, as {@link usage}). */
  meterStatus(limits: LimitsConfig, now: number): Promise<MeterStatus[]>;
  /** Sets a meter's window, month or total to `units` for every server sharing the store (`POST /__mockapi/usage`). */
  setMeter(meter: MeterConfig, units: number): Promise<void>;
  /**
   * The shared month and window (`GET /__mockapi/usage`), counting nothing. Never rejects: when the
   * store does not answer within its command timeout (at once when not connected), this server's
   * last known figures, `reachable: false`.
   */
  usage(limits: LimitsConfig, now: number): Promise<SharedUsage>;
  /**
   * Zeroes the shared month and/or empties the shared window, for every server sharing the store;
   * resolves once Redis applied it, rejects when it cannot be reached. This server's own part is
   * {@link forget}'s.
   */
  reset(parts: LimitParts): Promise<void>;
  /** Sets the shared month's count to `requests` (`POST /__mockapi/usage`), for every server sharing the store; rejects when it cannot be reached. */
  setUsage(requests: number, now: number): Promise<void>;
  /** Forgets this server's own part only: what it counted alone while the store was away, its fallback windows, the last figures read. */
  forget(parts: LimitParts, now: number): void;
}

/** Which limits a reset zeroes. */
export interface LimitParts {
  usage: boolean;
  rateLimit: boolean;
}

/** The usage figures of a shared store. */
export interface SharedUsage {
  /** By Redis's clock. */
  month: string;
  requests: number;
  /** The shared window as the next request would find it; undefined without a rate limit. */
  rate: RateLimitStatus | undefined;
  /**
   * False when the store did not answer: then `month` and `requests` are the last this server read
   * from it plus what it admitted alone since (`storeDown: open`, or nothing to decide), and `rate` is its own fallback
   * window (`open`) or the shared one as last seen (`closed`).
   */
  reachable: boolean;
}

export interface LimitGateHandle {
  /** In-process (synchronous: the usual request never waits for a promise) or through a store. */
  gate: LimitGate | StoreLimitGate;
  usage: UsageStore;
  /** Writes pending usage and stops the flush timer. */
  close(): Promise<void>;
}

const ADMITTED_UNLIMITED: LimitVerdict = { outcome: 'admitted', rate: undefined, retryAfterSeconds: 0 };

/** Retry-After of a meter's refusal: the seconds until the reserve fits (at least 1), until the month resets, or 0 (it never will by waiting). */
export function meterRetryAfter(refusal: MeterRefusal): number {
  return refusal.retryAfterMs > 0 ? Math.max(1, Math.ceil(refusal.retryAfterMs / 1000)) : 0;
}

/** A gate whose counters live outside any config, so reloads keep them. */
export function createGate(usage: UsageStore): LimitGate {
  let rateLimiter = createRateLimiter();
  const quota = createQuota(usage);
  const meters = createMeterLedger();

  /** The rate window's and month's verdict with the meters asked and counted too (limits with `meters:`). */
  function admitMetered(limits: LimitsConfig, now: number, reserves: Reserves | undefined): LimitVerdict {
    const list = limits.meters!;
    if (!rateLimiter.admits(limits.rateLimit, now)) {
      const rate = rateLimiter.check(limits.rateLimit, now) as RateLimitDecision;
      return {
        outcome: 'rate_limited',
        rate,
        retryAfterSeconds: rate.retryAfterSeconds,
        meters: meters.status(list, now),
      };
    }
    if (quota.exceeds(limits.monthlyQuota, now)) {
      usage.reconcileSoon(now);
      return {
        outcome: 'quota_exceeded',
        rate: rateLimiter.check(limits.rateLimit, now),
        retryAfterSeconds: quota.check(limits.monthlyQuota, now).retryAfterSeconds,
        meters: meters.status(list, now),
      };
    }
    const refused = reserves === undefined ? undefined : meters.refusal(list, reserves, now);
    if (refused !== undefined) {
      const outcome = refused.why === 'exhausted' ? 'quota_exceeded' : 'rate_limited';
      return {
        outcome,
        rate: rateLimiter.check(limits.rateLimit, now),
        retryAfterSeconds: meterRetryAfter(refused),
        meters: meters.status(list, now),
        meter: refused,
      };
    }
    const rate = rateLimiter.record(now);
    quota.record(now);
    if (reserves === undefined)
      return { outcome: 'admitted', rate, retryAfterSeconds: 0, meters: meters.status(list, now) };
    meters.record(list, reserves, now);
    const settle: SettleToken = { at: now, month: monthOf(now), meters: list, reserves };
    return { outcome: 'admitted', rate, retryAfterSeconds: 0, meters: meters.status(list, now), settle };
  }

  return {
    shared: false,
    meters,
    rateStatus: (limits, now) => rateLimiter.check(limits.rateLimit, now),
    resetRateLimit() {
      rateLimiter = createRateLimiter();
    },
    admit(limits, now, reserves) {
      if (limits.meters !== undefined) return admitMetered(limits, now, reserves);
      if (!rateLimiter.admits(limits.rateLimit, now)) {
        const rate = rateLimiter.check(limits.rateLimit, now) as RateLimitDecision;
        return { outcome: 'rate_limited', rate, retryAfterSeconds: rate.retryAfterSeconds };
      }
      if (quota.exceeds(limits.monthlyQuota, now)) {
        const monthly = quota.check(limits.monthlyQuota, now);
        usage.reconcileSoon(now); // a `mockapi usage --reset` may have been made since the last write
        // RateLimit-* as checked, before counting: a quota 429 consumes no slot.
        return {
          outcome: 'quota_exceeded',
          rate: rateLimiter.check(limits.rateLimit, now),
          retryAfterSeconds: monthly.retryAfterSeconds,
        };
      }
      const status = rateLimiter.record(now);
      quota.record(now);
      return status === undefined ? ADMITTED_UNLIMITED : { outcome: 'admitted', rate: status, retryAfterSeconds: 0 };
    },
  };
}

/**
 * Creates the gate over a usage store kept in `state` (a file) or in memory (`false`); or, with a
 * `store` URL, over the shared store of `project` (the state file is then not used: the month's
 * count lives in the store). The store's code and its client are loaded only then.
 */
export async function createLimitGate(options: {
  state: string | false;
  clock: Clock;
  logger: Logger;
  store?: string;
  /** `limits.storeDown` at start (each request then reads its own config's). */
  storeDown?: 'closed' | 'open';
  /** Whether the config at start has any limit to decide (see `StoreGateOptions.limited`). */
  limited?: boolean;
  project?: string;
  /** A key of `keys:`: its own counts, in the store or in its own state file beside `state` (see `keyStateFile`). */
  keyName?: string;
  /** A named session of a fleet: its own counts in the store (never a state file). */
  session?: string;
}): Promise<LimitGateHandle> {
  if (options.store !== undefined) {
    const { createStoreGate } = await import('./store-gate.js');
    const { store: url, project = 'mockapi', storeDown, limited, logger, keyName, session } = options;
    // Requests admitted while the store is away and not yet added to it are kept beside the state file at stop.
    const pendingFile = options.state === false ? undefined : forKey(storePendingFile(options.state), keyName);
    const shared = await createStoreGate({
      url,
      project,
      storeDown,
      ...(limited === undefined ? {} : { limited }),
      logger,
      pendingFile,
      clock: options.clock,
      ...(keyName === undefined ? {} : { keyName }),
      ...(session === undefined ? {} : { session }),
    });
    return { gate: shared.gate, usage: createMemoryUsageStore(), close: () => shared.close() };
  }
  const usage = await createUsageStore({
    file: options.state === false ? undefined : forKey(options.state, options.keyName),
    clock: options.clock,
    logger: options.logger,
  });
  return { gate: createGate(usage), usage, close: () => usage.close() };
}
