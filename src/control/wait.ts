import { ControlError, WaitTimeoutError } from './control-error.js';
import { viewEntry, type JournalEntry, type RawEntry } from './journal-entry.js';
import { copyEntry, matchesFilter, type Journal, type RequestFilter } from './journal.js';
import { flushWrites } from '../http/write-batch.js';
import { closestMisses, describeFilter } from './wait-miss.js';

/** How long and for how many requests `waitForRequests` waits. */
export interface WaitOptions {
  /** Matching requests to wait for (default 1). */
  count?: number;
  /** Milliseconds, or a duration (`5s`); default 5 s, at most 60 s (longer is cut to 60 s). */
  timeout?: number | string;
}

export const DEFAULT_WAIT_MS = 5000;
export const MAX_WAIT_MS = 60_000;

const SPAN_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A non-negative span of time: milliseconds as a number, or `250ms`, `2s`, `1m`, `1h`, `31d`. */
export function parseSpan(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(value.trim());
  if (match === null) return undefined;
  const ms = Number(match[1]) * SPAN_UNITS[match[2] ?? 'ms']!;
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

/**
 * Resolves once `count` requests matching `filter` (with `id > since`) have been journaled —
 * counting those already there — with the last `limit` of them, oldest first. Event-driven: the
 * journal calls back on each new request, nothing polls. Rejects with {@link WaitTimeoutError}
 * (holding what did match) after the timeout, and stops at once when `signal` aborts.
 */
export function waitForEntries(journal: Journal, filter: RequestFilter, options: WaitOptions, signal?: AbortSignal): Promise<JournalEntry[]> {
  // A request is journaled just before its answer is queued (http/write-batch.ts); this runs after
  // that, and writes what is queued first: when a wait answers, the answers to the requests it
  // hands back have been written, as they were before writes were batched.
  return entriesJournaled(journal, filter, options, signal).then((entries) => {
    flushWrites();
    return entries;
  });
}

function entriesJournaled(journal: Journal, filter: RequestFilter, options: WaitOptions, signal?: AbortSignal): Promise<JournalEntry[]> {
  const count = options.count ?? 1;
  if (!Number.isSafeInteger(count) || count < 0) return Promise.reject(new ControlError(400, 'bad_request', `count must be a whole number ≥ 0, got ${String(options.count)}`));
  const timeout = options.timeout === undefined ? DEFAULT_WAIT_MS : parseSpan(options.timeout);
  if (timeout === undefined) return Promise.reject(new ControlError(400, 'bad_request', `timeout must be a duration such as 500ms or 5s, got ${JSON.stringify(options.timeout)}`));
  const matching = { ...filter, limit: undefined };
  // What is handed back is bounded whatever `count` is: the last `limit` matches, or as many as the journal keeps.
  const keep = filter.limit ?? Math.max(journal.capacity, 1);
  // Copies: the journal reuses its entries, and these are kept until the wait ends.
  const found: RawEntry[] = journal.list(matching).map(copyEntry);
  let seen = found.length;
  const answer = (): JournalEntry[] => found.slice(Math.max(0, found.length - keep)).map(viewEntry);
  if (seen >= count) return Promise.resolve(answer());

  return new Promise((resolve, reject) => {
    const finish = (): void => {
      clearTimeout(timer);
      unlisten();
      signal?.removeEventListener('abort', onAbort);
    };
    const unlisten = journal.listen((entry) => {
      if (!matchesFilter(entry, matching)) return;
      found.push(copyEntry(entry));
      if (found.length > 2 * keep) found.splice(0, found.length - keep);
      if (++seen < count) return;
      finish();
      resolve(answer());
    });
    const timer = setTimeout(() => {
      finish();
      const what = `${seen} of ${count} request${count === 1 ? '' : 's'} matching ${describeFilter(matching)} arrived within ${Math.min(timeout, MAX_WAIT_MS)} ms`;
      reject(new WaitTimeoutError(`${what}; ${closestMisses(journal, matching)}`, answer()));
    }, Math.min(timeout, MAX_WAIT_MS));
    const onAbort = (): void => {
      finish();
      reject(new ControlError(499, 'aborted', 'the wait was cancelled'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
