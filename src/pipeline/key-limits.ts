import type { LimitsConfig, RateLimitConfig } from '../config/types.js';
import { DEFAULT_KEY_NAME } from '../config/types.js';
import { withMonthStatus } from './limit-headers.js';
import {
  createLimitGate,
  type LimitGate,
  type LimitGateHandle,
  type LimitVerdict,
  type StoreLimitGate,
} from './limits.js';
import { createRateLimiter, type RateLimiter, type RateLimitStatus } from './rate-limit.js';
import type { Reserves } from './meters.js';

/*
 * The limits of the keys of `keys:` (each counted on its own: its rate window and its month, in a
 * state file or a shared store of its own) and the endpoints' own rate windows (per endpoint and per
 * key, on top of the key's plan) of an in-process gate (a shared store keeps them in Redis, see
 * src/pipeline/store-gate.ts). `apiKey`, the key named `default`, keeps the server's first gate:
 * a config without `keys:` and without endpoint limits never reaches this module on a request.
 */

/** One named key's gate and usage, as {@link createLimitGate} makes them. */
export type KeyLimitParts = LimitGateHandle;

/** Options of {@link createKeyLimits}: those of {@link createLimitGate}, less the key's name. */
export type KeyLimitsOptions = Omit<Parameters<typeof createLimitGate>[0], 'keyName'>;

export interface KeyLimits {
  /**
   * The gate of the key named `name`: made on first use (with its state file or store, which takes
   * a moment: the promise), then at once. `prepare` makes them before a request needs one.
   */
  gate(name: string): LimitGate | StoreLimitGate | Promise<LimitGate | StoreLimitGate>;
  /** The parts of `name`, made if need be (usage, reset, `POST /__mockapi/usage`). */
  parts(name: string): Promise<KeyLimitParts>;
  /** The parts of `name` when they are made already. */
  readyParts(name: string): KeyLimitParts | undefined;
  /** Every key's parts made so far, by name. */
  all(): ReadonlyMap<string, KeyLimitParts>;
  /** Makes the gates of `names` now: at start, and when a reload adds keys. */
  prepare(names: readonly string[]): Promise<void>;
  /** The in-process endpoint window of `endpoint` (its route key) for the key `name`, made on first use. */
  endpointLimiter(endpoint: string, name: string): RateLimiter;
  /** Empties every endpoint window (`POST /__mockapi/reset`, a virtual clock set back). */
  resetEndpointWindows(): void;
  /** Writes every key's pending usage and stops their timers. */
  close(): Promise<void>;
}

/** Creates the registry; nothing is opened until a key is named. */
export function createKeyLimits(options: KeyLimitsOptions): KeyLimits {
  const ready = new Map<string, KeyLimitParts>();
  const making = new Map<string, Promise<KeyLimitParts>>();
  // endpoint route key → key name → its window
  const windows = new Map<string, Map<string, RateLimiter>>();
  let closed = false;

  function parts(name: string): Promise<KeyLimitParts> {
    let made = making.get(name);
    if (made === undefined) {
      made = createLimitGate({ ...options, keyName: name }).then((handle) => {
        const made: KeyLimitParts = { ...handle, gate: withMonthStatus(handle.gate, (now) => handle.usage.count(now)) };
        ready.set(name, made);
        // A key made while closing is closed at once: its count is written, its timer stopped.
        if (closed) void handle.close();
        return made;
      });
      making.set(name, made);
    }
    return made;
  }

  return {
    gate: (name) => ready.get(name)?.gate ?? parts(name).then((p) => p.gate),
    parts,
    readyParts: (name) => ready.get(name),
    all: () => ready,
    async prepare(names) {
      await Promise.all(names.map(parts));
    },
    endpointLimiter(endpoint, name) {
      let byKey = windows.get(endpoint);
      if (byKey === undefined) windows.set(endpoint, (byKey = new Map()));
      let limiter = byKey.get(name);
      if (limiter === undefined) byKey.set(name, (limiter = createRateLimiter()));
      return limiter;
    },
    resetEndpointWindows() {
      windows.clear();
    },
    async close() {
      closed = true;
      const all = await Promise.allSettled([...making.values()]);
      await Promise.all(all.map((p) => (p.status === 'fulfilled' ? p.value.close() : undefined)));
    },
  };
}

/** The name a verdict of the auth step goes by: `default` for `apiKey`. */
export function keyNameOf(auth: 'ok' | { name: string }): string {
  return auth === 'ok' ? DEFAULT_KEY_NAME : auth.name;
}

/**
 * The endpoint window's check at `now` for a request the plan has not decided yet: a 429 verdict
 * when it is full (the plan's window is then not asked, so nothing of it is consumed), else undefined.
 */
export function endpointRefusal(limiter: RateLimiter, config: RateLimitConfig, now: number): LimitVerdict | undefined {
  if (limiter.admits(config, now)) return undefined;
  const rate = limiter.check(config, now);
  return rate === undefined ? undefined : { outcome: 'rate_limited', rate, retryAfterSeconds: rate.retryAfterSeconds };
}

/**
 * An in-process gate's verdict for a request through an endpoint with a window of its own: the
 * endpoint's window first (refused there: the plan is not asked), then the plan's gate; the
 * endpoint's slot is counted only when the plan admitted the request. Synchronous, so exact.
 */
export function admitWithEndpoint(
  gate: LimitGate,
  limits: LimitsConfig,
  now: number,
  limiter: RateLimiter,
  window: RateLimitConfig,
  reserves?: Reserves,
): LimitVerdict {
  const refused = endpointRefusal(limiter, window, now);
  if (refused !== undefined)
    return limits.meters === undefined ? refused : { ...refused, meters: gate.meters.status(limits.meters, now) };
  const verdict = gate.admit(limits, now, reserves);
  return closestToFull(verdict, verdict.outcome === 'admitted' ? limiter.record(now) : limiter.check(window, now));
}

/**
 * The plan's verdict with the endpoint window's status: the RateLimit-* headers describe whichever
 * window is closer to full (fewer requests remaining; on a tie, the later reset).
 */
export function closestToFull(verdict: LimitVerdict, endpoint: RateLimitStatus | undefined): LimitVerdict {
  if (endpoint === undefined) return verdict;
  const plan = verdict.rate;
  if (
    plan !== undefined &&
    (plan.remaining < endpoint.remaining ||
      (plan.remaining === endpoint.remaining && plan.resetSeconds >= endpoint.resetSeconds))
  )
    return verdict;
  return {
    ...verdict,
    rate: { limit: endpoint.limit, remaining: endpoint.remaining, resetSeconds: endpoint.resetSeconds },
  };
}
