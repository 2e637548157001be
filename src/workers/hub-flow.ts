import type { JournalEntry } from '../control/journal-entry.js';

/**
 * Most batches of forwarded journal entries on their way over one IPC channel. Entries are forwarded
 * only while a wait or an event stream is open on another `serve --workers` worker; when that worker
 * (or the primary relaying to it) cannot keep up with a load, the batches beyond this bound are
 * dropped — the stream misses them, the journals keep them — instead of queuing without end in the
 * sender's memory.
 */
export const MAX_BATCHES_IN_FLIGHT = 64;

/** One channel's flow of forwarded entries: see {@link createEntryFlow}. */
export interface EntryFlow {
  /** Sends a batch unless too many are on their way; false when it was dropped. */
  send(entries: JournalEntry[]): boolean;
  /** Entries dropped so far. */
  readonly dropped: number;
}

/**
 * Counts the batches `write` has not finished writing (it calls `done` once the channel took the
 * message, or failed to) and drops batches beyond `max`.
 */
export function createEntryFlow(
  write: (entries: JournalEntry[], done: () => void) => void,
  max = MAX_BATCHES_IN_FLIGHT,
): EntryFlow {
  let inFlight = 0;
  let dropped = 0;
  const done = (): void => {
    inFlight--;
  };
  return {
    send(entries) {
      if (inFlight >= max) {
        dropped += entries.length;
        return false;
      }
      inFlight++;
      write(entries, done);
      return true;
    },
    get dropped() {
      return dropped;
    },
  };
}
