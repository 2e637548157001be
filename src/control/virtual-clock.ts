import type { Clock } from '../clock.js';

/** The earliest time the virtual clock shows: the first an ISO time with a four-digit year can name. */
export const CLOCK_MIN = Date.parse('0000-01-01T00:00:00.000Z');
/** The latest time the virtual clock shows: the last an ISO time with a four-digit year (and a `YYYY-MM` month) can name. */
export const CLOCK_MAX = Date.parse('9999-12-31T23:59:59.999Z');

/** The range as users read it, for error messages. */
export const CLOCK_RANGE_TEXT = 'from 0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z';

/** Whether `time` (ms since the epoch) is a time the virtual clock can show. */
export function isClockTime(time: number): boolean {
  return Number.isFinite(time) && time >= CLOCK_MIN && time <= CLOCK_MAX;
}

/**
 * A clock for tests (`serve --clock <ISO time>`): it starts at a given time and runs on
 * in real time; `set` and `advance` move it. Everything that reads time in the server reads this
 * one function, so the rate window, the quota month, Retry-After and the journal's times follow it.
 * It never leaves {@link CLOCK_MIN}–{@link CLOCK_MAX}: a move that would is refused, and a clock
 * left running at the very end stops there, so every time it gives is a valid Date with a
 * four-digit year (a journal time, a `YYYY-MM` month in the state file).
 */
export interface VirtualClock {
  /** Milliseconds since the epoch, on the virtual clock. */
  readonly now: Clock;
  /** Moves the clock to `time` (ms since the epoch); it runs on from there. False, the clock unchanged, when `time` is out of range. */
  set(time: number): boolean;
  /** Moves the clock by `ms`. False, the clock unchanged, when that would take it out of range. */
  advance(ms: number): boolean;
  /** Puts the clock back where it started (`POST /__mockapi/reset`, part `clock`); it runs on from there. */
  reset(): void;
  /** Calls `listener` after every move (what waits for a time on this clock re-arms its timer). */
  onMove(listener: () => void): () => void;
}

/** Starts a virtual clock at `start` (ms since the epoch); a RangeError when `start` is out of range. `real` is injectable for tests. */
export function createVirtualClock(start: number, real: Clock = Date.now): VirtualClock {
  if (!isClockTime(start)) throw new RangeError(`a virtual clock must start at a time ${CLOCK_RANGE_TEXT}`);
  let offset = start - real();
  const now = (): number => Math.min(CLOCK_MAX, Math.max(CLOCK_MIN, real() + offset));
  const listeners = new Set<() => void>();
  const moved = (): true => {
    for (const listener of listeners) listener();
    return true;
  };
  return {
    now,
    set(time) {
      if (!isClockTime(time)) return false;
      offset = time - real();
      return moved();
    },
    advance(ms) {
      if (!isClockTime(now() + ms)) return false;
      offset += ms;
      return moved();
    },
    reset() {
      offset = start - real();
      moved();
    },
    onMove(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/**
 * Reads an ISO 8601 time with a date and a time zone (`2026-11-30T23:59:59Z`, or a `+02:00`
 * offset), or a date alone (`2026-11-30`, midnight UTC). Returns undefined for anything else, so
 * a local-time reading that depends on the machine's zone is never taken.
 */
export function parseIsoTime(text: string): number | undefined {
  const iso = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/i;
  if (!iso.test(text)) return undefined;
  const time = Date.parse(text);
  return Number.isFinite(time) ? time : undefined;
}
