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
}

/**
 * Creates a limiter that admits a request at `t` iff fewer than `requests` requests were admitted
 * in `(t - window, t]`, so no interval of length `window` ever holds more than `requests`.
 *
 * It keeps the admission times still inside the window, oldest first, in a ring buffer
 * (Float64Array) as long as the largest `requests` configured: expired times are dropped from the
 * front, so each request costs O(1) amortised work and memory stays at most 800 KB.
 *
 * Reloads keep what was counted: a new `window` applies to the stored times at once, a lower
 * `requests` keeps every counted time (the window may stay full until they expire), a higher one
 * grows the buffer. Removing `rateLimit` from the config forgets the counted times (requests are
 * not tracked without a limit, so kept ones would be a partial picture); adding it back starts empty.
 *
 * Times should not go backwards; a clock that steps back is treated as standing still, so the
 * limit is never exceeded because of it.
 */
export function createRateLimiter(): RateLimiter {
  let ring = new Float64Array(0);
  let head = 0; // index of the oldest counted time
  let size = 0; // counted times still (possibly) in the window
  let limit = 0;
  let windowMs = 0;
  let active = false;
  let latest = -Infinity;

  function configure(config: RateLimitConfig | undefined): void {
    if (!config) {
      if (active) {
        ring = new Float64Array(0);
        head = size = limit = 0;
        active = false;
      }
      return;
    }
    if (config.requests > ring.length) grow(config.requests);
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

  /** The i-th oldest counted time. */
  function at(i: number): number {
    return ring[(head + i) % ring.length]!;
  }

  function dropExpired(t: number): void {
    const edge = t - windowMs;
    while (size > 0 && ring[head]! <= edge) {
      head = (head + 1) % ring.length;
      size--;
    }
  }

  function status(t: number): RateLimitStatus {
    // A slot frees when the counted time at `size - limit` leaves the window (the oldest when not full).
    const resetSeconds = size === 0 ? 0 : ceilSeconds(at(Math.max(0, size - limit)) + windowMs - t);
    return { limit, remaining: Math.max(0, limit - size), resetSeconds };
  }

  return {
    check(config, now) {
      configure(config);
      if (!active) return undefined;
      const t = Math.max(now, latest);
      dropExpired(t);
      const current = status(t);
      if (size < limit) return { ...current, admitted: true, retryAfterSeconds: 0 };
      return { ...current, admitted: false, retryAfterSeconds: Math.max(1, current.resetSeconds) };
    },
    record(now) {
      if (!active) return undefined;
      const t = Math.max(now, latest);
      dropExpired(t);
      if (size >= limit) throw new Error('rate limiter: record() called while the window is full');
      ring[(head + size) % ring.length] = t;
      size++;
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
