import { MAX_CLIENTS, retryMoment } from '../control/early-retries.js';

/**
 * How far (ms) the moment a Retry-After names may move before the other `serve --workers` workers
 * are told again. Retry-After counts whole seconds, so consecutive answers to one client name the
 * same moment give or take a second: telling each of them would cost a message per answer (a flood
 * of 429s would be a flood of messages), and tells the other workers nothing a second's precision
 * does not already.
 */
export const RETELL_MS = 1000;

/** Which Retry-Afters a worker tells the others: see {@link createTellings}. */
export interface Tellings {
  /** Whether `Retry-After: value`, given to `client` at `now`, is worth telling (and, if so, remembers it as told). */
  worthTelling(client: string, value: string, now: number): boolean;
}

/**
 * Remembers the moment last told per client (at most `max` clients, the one told longest ago
 * forgotten first): a Retry-After is told when the client is new or its moment moved by more than
 * {@link RETELL_MS}. A flood of 429s to one client then costs at most one message a second.
 */
export function createTellings(max = MAX_CLIENTS): Tellings {
  const told = new Map<string, number>();
  return {
    worthTelling(client, value, now) {
      const until = retryMoment(value, now);
      if (until === undefined) return false;
      const before = told.get(client);
      if (before !== undefined && Math.abs(until - before) <= RETELL_MS) return false;
      told.delete(client);
      if (told.size >= max) told.delete(told.keys().next().value as string);
      told.set(client, until);
      return true;
    },
  };
}
