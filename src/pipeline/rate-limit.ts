import type { RateLimitConfig } from '../config/types.js';

/** The largest `limits.rateLimit.requests` the schema accepts; bounds the limiter's memory (8 bytes a slot). */
export const MAX_RATE_LIMIT_REQUESTS = 100_000;

/** What the `RateLimit-*` headers say (SPEC §5.2). */
export interface RateLimitStatus {
  /** `RateLimit-Limit`: the configured `requests`. */
  limit: number;
  /** `RateLimit-Remaining`: requests that would be admitted right now. */
  remaining: number;
  /** `RateLimit-Reset`: whole seconds (rounded up) until a slot frees; 0 when nothing is counted. */
  resetSeconds: number;
}

/** The rate-limit step's verdict for one request, before anything is counted. */
export interface RateLimitDecision extends RateLimitStatus {
  admitted: boolean;
  /** `Retry-After` for the 429: whole seconds, rounded up, at least 1. 0 when admitted. */
  retryAfterSeconds: number;
}

/**
 * An exact sliding-window rate limiter. Created once per server and kept across reloads.
 *
 * Per request, synchronously in one tick: `check()` decides without counting; only when every
 * step before the match admits the request does `record()` count it and give the headers to send.
 */
export interface RateLimiter {
  /**
   * Applies `config` (a reload may have changed it) and says whether a request at `now` is
   * admitted. Counts nothing. `undefined` when no rate limit is configured; `remaining` does not
   * include this request, which is what a quota 429 (that consumes nothing) should show.
   */
  check(config: RateLimitConfig | undefined, now: number): RateLimitDecision | undefined;
  /**
   * Counts a request at `now` and returns the headers to send with its answer (`remaining` after
   * this request). Must follow an admitting `check()` in the same tick; throws when the window is
   * full, as that would break the limit. `undefined` when no rate limit is configured.
   */
  record(now: number): RateLimitStatus | undefined;
  /**
   * `check()` without building its verdict, for the usual admitted request: applies `config` and
   * says whether a request at `now` would be admitted (true when no rate limit is configured).
   */
  admits(config: RateLimitConfig | undefined, now: number): boolean;
}

/**
 * Creates a limiter that admits a request at `t` iff fewer than `requests` requests were admitted
 * in `(t - window, t]`, so no interval of length `window` ever holds more than `requests`.
 *
 * It keeps the times of the last admissions in a ring buffer (Float64Array) as long as the largest
 * `requests` configured, oldest first, with a pointer to the first one still inside the window that
 * only moves forward: O(1) amortised work per request, and at most 800 KB (100 000 × 8 bytes).
 *
 * Reloads keep what was counted: a new `window` applies to the stored times at once (a longer one
 * counts earlier admissions again), a lower `requests` keeps every counted time (the window may
 * stay full until they leave it), a higher one grows the buffer. Removing `rateLimit` forgets the
 * counted times (nothing is tracked without a limit, so kept ones would be a partial picture);
 * adding it back starts empty.
 *
 * Times should not go backwards; a clock that steps back is treated as standing still, so the
 * limit is never exceeded because of it.
 */
export function createRateLimiter(): RateLimiter {
  let ring = new Float64Array(0);
  let head = 0; // ring index of the oldest stored time
  let size = 0; // stored times, oldest first
  let first = 0; // position (0 = oldest) of the first stored time still inside the window
  let limit = 0;
  let windowMs = 0;
  let active = false;
  let latest = -Infinity;

  function configure(config: RateLimitConfig | undefined): void {
    if (!config) {
      if (active) {
        ring = new Float64Array(0);
        head = size = first = limit = 0;
        active = false;
      }
      return;
    }
    if (config.requests > ring.length) grow(config.requests);
    if (config.windowMs !== windowMs) first = 0; // a longer window may take older times back in
    limit = config.requests;
    windowMs = config.windowMs;
    active = true;
  }

  function grow(capacity: number): void {
    const next = new Float64Array(capacity);
    for (let i = 0; i < size; i++) next[i] = at(i);
    ring = next;
    head = 0;
  }

  /** Ring index of position `i` (0 = the oldest), for 0 ≤ i ≤ ring.length: no `%`, which divides. */
  function slot(i: number): number {
    const j = head + i;
    return j < ring.length ? j : j - ring.length;
  }

  /** The stored time at position `i`, 0 being the oldest. */
  function at(i: number): number {
    return ring[slot(i)]!;
  }

  function advance(t: number): void {
    const edge = t - windowMs;
    while (first < size && at(first) <= edge) first++;
  }

  function status(t: number): RateLimitStatus {
    const counted = size - first;
    // A slot frees when the counted time `counted - limit` places after the oldest leaves the window.
    const resetSeconds = counted === 0 ? 0 : ceilSeconds(at(first + Math.max(0, counted - limit)) + windowMs - t);
    return { limit, remaining: Math.max(0, limit - counted), resetSeconds };
  }

  return {
    check(config, now) {
      configure(config);
      if (!active) return undefined;
      const t = Math.max(now, latest);
      advance(t);
      const { remaining, resetSeconds } = status(t);
      // Written out rather than spread: `{ ...status }` takes V8's slow clone path (about 1 µs).
      if (size - first < limit) return { limit, remaining, resetSeconds, admitted: true, retryAfterSeconds: 0 };
      return { limit, remaining, resetSeconds, admitted: false, retryAfterSeconds: Math.max(1, resetSeconds) };
    },
    admits(config, now) {
      configure(config);
      if (!active) return true;
      advance(Math.max(now, latest));
      return size - first < limit;
    },
    record(now) {
      if (!active) return undefined;
      const t = Math.max(now, latest);
      advance(t);
      if (size - first >= limit) throw new Error('rate limiter: record() called while the window is full');
      if (size < ring.length) {
        ring[slot(size)] = t;
        size++;
      } else {
        // Full buffer: overwrite the oldest time, which is outside the window (first >= 1 here).
        ring[head] = t;
        head = slot(1);
        first--;
      }
      latest = t;
      return status(t);
    },
  };
}

function ceilSeconds(ms: number): number {
  return Math.max(0, Math.ceil(ms / 1000));
}

/** The `RateLimit-*` headers (and `Retry-After` for a refusal) as a flat `[name, value, …]` list. */
export function rateLimitHeaders(status: RateLimitStatus, retryAfterSeconds?: number): string[] {
  const headers = [
    'RateLimit-Limit', String(status.limit),
    'RateLimit-Remaining', String(status.remaining),
    'RateLimit-Reset', String(status.resetSeconds),
  ];
  if (retryAfterSeconds !== undefined) headers.push('Retry-After', String(retryAfterSeconds));
  return headers;
}
