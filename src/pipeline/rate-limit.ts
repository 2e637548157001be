import type { RateLimitConfig } from '../config/types.js';
import { MAX_DURATION_MS } from '../config/units.js';

/** The largest `limits.rateLimit.requests` the schema accepts. The limiter's memory does not depend on it. */
export const MAX_RATE_LIMIT_REQUESTS = 1_000_000_000;

/**
 * Slots of history (admissions older than the window) kept at full precision before the older half
 * of them is merged; see `createRateLimiter`. 16 bytes a slot: history takes at most 256 KB.
 */
export const HISTORY_SLOTS = 8_192;

/** What the `RateLimit-*` headers say. */
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
  /** What the limiter holds: `slots` (distinct admission times, merged history included) and the ring's `capacity`. */
  footprint(): { slots: number; capacity: number };
}

/** Options for tests; the defaults are what a server uses. */
export interface RateLimiterOptions {
  /** See {@link HISTORY_SLOTS}; at least 2. */
  historySlots?: number;
}

const MIN_CAPACITY = 16;

/**
 * Creates a limiter that admits a request at `t` iff fewer than `requests` requests were admitted
 * in `(t - window, t]`, so no interval of length `window` ever holds more than `requests`.
 *
 * It keeps admissions as slots `(time, count)` in a ring buffer (two Float64Arrays, a power of two
 * long), oldest first: requests admitted in the same millisecond share one slot, so memory follows
 * the distinct times the window holds, not `requests` (10^9 requests in one millisecond take one
 * slot). A pointer to the first slot inside the window only moves forward and a running count of
 * what the window holds is kept beside it: O(1) amortised work per request, nothing allocated but
 * the headers' object.
 *
 * Reloads keep what was counted, and the new limits apply to everything admitted before and after:
 * a lower `requests` keeps every counted time (the window may stay full until enough leave it), a
 * longer `window` counts earlier admissions again. For that, slots that leave the window are kept as
 * history: the newest `historySlots / 2` to `2 × historySlots` of them at full precision; when
 * history reaches `2 × historySlots`, all but its newest `historySlots / 2` are merged pairwise
 * (repeatedly, until `historySlots` are left), a merged slot holding its admissions at the latest
 * time it covers. Merging can only make a longer window count more, never fewer, so the limit holds
 * after any reload; it is exact while the admissions the new window takes back fit in the precise
 * part. History older than the longest window the schema allows is dropped. Removing `rateLimit`
 * forgets the counted times (nothing is tracked without a limit); adding it back starts empty.
 *
 * Times should not go backwards; a clock that steps back is treated as standing still, so the
 * limit is never exceeded because of it.
 */
export function createRateLimiter(options: RateLimiterOptions = {}): RateLimiter {
  const historySlots = Math.max(2, options.historySlots ?? HISTORY_SLOTS);
  const compactAt = 2 * historySlots;
  let times = new Float64Array(MIN_CAPACITY);
  let counts = new Float64Array(MIN_CAPACITY);
  let mask = MIN_CAPACITY - 1;
  let head = 0; // ring index of the oldest slot
  let size = 0; // slots held, oldest first
  let first = 0; // position (0 = oldest) of the first slot inside the window; the ones before are history
  let counted = 0; // admissions in the window's slots
  let limit = 0;
  let windowMs = 0;
  let active = false;
  let applied: RateLimitConfig | undefined;
  let latest = -Infinity;
  let frees = NaN; // cache: time of the slot holding the `limit`-th newest admission; NaN when unknown

  function configure(config: RateLimitConfig | undefined): void {
    if (config === applied) return;
    applied = config;
    if (!config) {
      if (active) clear();
      return;
    }
    if (config.windowMs > windowMs) {
      // A longer window may take history back in; advance() finds its new start. Summed here rather
      // than kept as a running total, which would outgrow a small integer and be boxed per request.
      for (; first > 0; first--) counted += counts[slot(first - 1)]!;
    }
    if (config.requests !== limit) frees = NaN;
    limit = config.requests;
    windowMs = config.windowMs;
    active = true;
  }

  function clear(): void {
    times = new Float64Array(MIN_CAPACITY);
    counts = new Float64Array(MIN_CAPACITY);
    mask = MIN_CAPACITY - 1;
    head = size = first = counted = limit = windowMs = 0;
    frees = NaN;
    active = false;
  }

  /** Ring index of position `i` (0 = the oldest). */
  function slot(i: number): number {
    return (head + i) & mask;
  }

  function advance(t: number): void {
    const edge = t - windowMs;
    while (first < size && times[slot(first)]! <= edge) counted -= counts[slot(first++)]!;
    if (first >= compactAt) compact(t);
  }

  /** Bounds history: drops what no window can reach, then merges the older part until `historySlots` are left. */
  function compact(t: number): void {
    while (first > 0 && times[head]! <= t - MAX_DURATION_MS) {
      head = slot(1);
      first--;
      size--;
    }
    const keep = historySlots >> 1;
    while (first > historySlots) {
      // Pairs of positions [0, older) merge into one slot each, written from the newest end backwards
      // (a write never overtakes the reads), so the merged slots end next to the precise part.
      const older = first - keep;
      let w = older - 1;
      let r = older - 1;
      for (; r >= 1; r -= 2, w--) {
        times[slot(w)] = times[slot(r)]!;
        counts[slot(w)] = counts[slot(r)]! + counts[slot(r - 1)]!;
      }
      if (r === 0) {
        times[slot(w)] = times[head]!;
        counts[slot(w)] = counts[head]!;
        w--;
      }
      head = slot(w + 1);
      first -= w + 1;
      size -= w + 1;
    }
    frees = NaN;
    let capacity = times.length;
    while (capacity > MIN_CAPACITY && size * 4 <= capacity) capacity >>= 1;
    if (capacity !== times.length) resize(capacity); // memory follows what is held
  }

  /** Moves the slots, oldest first, into new arrays of `capacity` (a power of two, at least `size`). */
  function resize(capacity: number): void {
    const nextTimes = new Float64Array(capacity);
    const nextCounts = new Float64Array(capacity);
    for (let i = 0; i < size; i++) {
      nextTimes[i] = times[slot(i)]!;
      nextCounts[i] = counts[slot(i)]!;
    }
    times = nextTimes;
    counts = nextCounts;
    mask = capacity - 1;
    head = 0;
  }

  /** Time of the slot holding the `limit`-th newest admission: a slot frees a window after it. */
  function freeingTime(): number {
    if (Number.isNaN(frees)) {
      let i = size - 1;
      for (let newer = counts[slot(i)]!; newer < limit; newer += counts[slot(i)]!) i--;
      frees = times[slot(i)]!;
    }
    return frees;
  }

  function status(t: number): RateLimitStatus {
    let resetSeconds = 0;
    if (counted > 0) {
      // Within the limit, a slot frees when the oldest counted admission leaves; above it (after a
      // reload), only when the `limit`-th newest has left.
      const from = counted <= limit ? times[slot(first)]! : freeingTime();
      resetSeconds = ceilSeconds(from + windowMs - t);
    }
    return { limit, remaining: counted < limit ? limit - counted : 0, resetSeconds };
  }

  return {
    check(config, now) {
      configure(config);
      if (!active) return undefined;
      const t = now > latest ? now : latest;
      advance(t);
      const { remaining, resetSeconds } = status(t);
      // Written out rather than spread: `{ ...status }` takes V8's slow clone path (about 1 µs).
      if (counted < limit) return { limit, remaining, resetSeconds, admitted: true, retryAfterSeconds: 0 };
      return { limit, remaining, resetSeconds, admitted: false, retryAfterSeconds: Math.max(1, resetSeconds) };
    },
    admits(config, now) {
      configure(config);
      if (!active) return true;
      advance(now > latest ? now : latest);
      return counted < limit;
    },
    record(now) {
      if (!active) return undefined;
      const t = now > latest ? now : latest;
      advance(t);
      if (counted >= limit) throw new Error('rate limiter: record() called while the window is full');
      if (first < size && times[slot(size - 1)] === t) {
        counts[slot(size - 1)] = counts[slot(size - 1)]! + 1;
      } else {
        if (size === times.length) resize(size * 2);
        times[slot(size)] = t;
        counts[slot(size)] = 1;
        size++;
      }
      counted++;
      if (t !== latest) latest = t; // a double in a closure is boxed: store it only when it changes
      frees = NaN;
      return status(t);
    },
    footprint: () => ({ slots: size, capacity: times.length }),
  };
}

function ceilSeconds(ms: number): number {
  return Math.max(0, Math.ceil(ms / 1000));
}

/** The `RateLimit-*` headers (and `Retry-After` for a refusal) as a flat `[name, value, …]` list. */
export function rateLimitHeaders(status: RateLimitStatus, retryAfterSeconds?: number): string[] {
  const headers: string[] = [];
  appendRateLimitHeaders(headers, status);
  if (retryAfterSeconds !== undefined) headers.push('Retry-After', String(retryAfterSeconds));
  return headers;
}

/** Adds the three RateLimit-* headers of `status` to `headers`. */
export function appendRateLimitHeaders(headers: string[], status: RateLimitStatus): void {
  headers.push(
    'RateLimit-Limit',
    String(status.limit),
    'RateLimit-Remaining',
    String(status.remaining),
    'RateLimit-Reset',
    String(status.resetSeconds),
  );
}
