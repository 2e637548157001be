import type { Clock } from '../clock.js';

/**
 * A clock for tests (SPEC §8, `serve --clock <ISO time>`): it starts at a given time and runs on
 * in real time; `set` and `advance` move it. Everything that reads time in the server reads this
 * one function, so the rate window, the quota month, Retry-After and the journal's times follow it.
 */
export interface VirtualClock {
  /** Milliseconds since the epoch, on the virtual clock. */
  readonly now: Clock;
  /** Moves the clock to `time` (ms since the epoch); it runs on from there. */
  set(time: number): void;
  /** Moves the clock forward by `ms` (≥ 0). */
  advance(ms: number): void;
  /** Puts the clock back where it started (`POST /__mockapi/reset`, part `clock`); it runs on from there. */
  reset(): void;
}

/** Starts a virtual clock at `start` (ms since the epoch). `real` is injectable for tests. */
export function createVirtualClock(start: number, real: Clock = Date.now): VirtualClock {
  let offset = start - real();
  return {
    now: () => real() + offset,
    set(time) {
      offset = time - real();
    },
    advance(ms) {
      offset += ms;
    },
    reset() {
      offset = start - real();
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
