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
 * A wait's reach beyond this process (a `serve --workers` worker): {@link WorkersWatch.watch} has every
 * other worker forward its entries to the journal's listeners (as `heard`) and answer what it held.
 */
export interface WorkersWatch {
  watch(filter: RequestFilter): { held: Promise<HeldEntries>; stop(): void };
}

/** What the other workers held when they started forwarding, and, per worker, whether a heard entry is newer than that. */
export interface HeldEntries {
  entries: RawEntry[];
  /** False for an entry already among `entries` (forwarded as it was being gathered). */
  isNew(entry: RawEntry): boolean;
}

/**
 * Resolves once `count` requests matching `filter` (with `id > since`) have been journaled —
 * counting those already there — with the last `limit` of them, oldest first. Event-driven: the
 * journal calls back on each new request, nothing polls. Rejects with {@link WaitTimeoutError}
 * (holding what did match) after the timeout, and stops at once when `signal` aborts. With `workers`,
 * every worker's requests count.
 */
export function waitForEntries(
  journal: Journal,
  filter: RequestFilter,
  options: WaitOptions,
  signal?: AbortSignal,
  workers?: WorkersWatch,
): Promise<JournalEntry[]> {
  // A request is journaled just before its answer is queued (http/write-batch.ts); this runs after
  // that, and writes what is queued first: when a wait answers, the answers to the requests it
  // hands back have been written, as they were before writes were batched.
  return entriesJournaled(journal, filter, options, signal, workers).then((entries) => {
    flushWrites();
    return entries;
  });
}

function entriesJournaled(
  journal: Journal,
  filter: RequestFilter,
  options: WaitOptions,
  signal?: AbortSignal,
  workers?: WorkersWatch,
): Promise<JournalEntry[]> {
  const count = options.count ?? 1;
  if (!Number.isSafeInteger(count) || count < 0)
    return Promise.reject(
      new ControlError(400, 'bad_request', `count must be a whole number ≥ 0, got ${String(options.count)}`),
    );
  const timeout = options.timeout === undefined ? DEFAULT_WAIT_MS : parseSpan(options.timeout);
  if (timeout === undefined)
    return Promise.reject(
      new ControlError(
        400,
        'bad_request',
        `timeout must be a duration such as 500ms or 5s, got ${JSON.stringify(options.timeout)}`,
      ),
    );
  const matching = { ...filter, limit: undefined };
  // What is handed back is bounded whatever `count` is: the last `limit` matches, or as many as the journal keeps.
  const keep = filter.limit ?? Math.max(journal.capacity, 1);
  // Copies: the journal reuses its entries, and these are kept until the wait ends.
  let found: RawEntry[] = journal.list(matching).map(copyEntry);
  let seen = found.length;
  // Entries of several workers arrive in no particular order: sorted by id (the order answered).
  const answer = (): JournalEntry[] =>
    (workers === undefined ? found : [...found].sort(byId)).slice(Math.max(0, found.length - keep)).map(viewEntry);
  if (workers === undefined && seen >= count) return Promise.resolve(answer());

  return new Promise((resolve, reject) => {
    // Across workers: what other workers held is not known yet; their entries forwarded meanwhile wait here.
    let held: HeldEntries | undefined;
    let early: RawEntry[] = [];
    const finish = (): void => {
      clearTimeout(timer);
      unlisten();
      watching?.stop();
      signal?.removeEventListener('abort', onAbort);
    };
    const take = (entry: RawEntry): void => {
      found.push(entry);
      seen++;
      if (found.length > 2 * keep)
        found = (workers === undefined ? found : found.sort(byId)).slice(found.length - keep);
    };
    const settle = (): void => {
      if (seen < count || (workers !== undefined && held === undefined)) return;
      finish();
      resolve(answer());
    };
    const unlisten = journal.listen((entry, heard) => {
      if (!matchesFilter(entry, matching)) return;
      if (heard && held === undefined) return void early.push(copyEntry(entry));
      if (heard && !held!.isNew(entry)) return;
      take(copyEntry(entry));
      settle();
    });
    const watching = workers?.watch(matching);
    watching?.held.then((h) => {
      held = h;
      for (const entry of h.entries) take(entry);
      for (const entry of early) if (h.isNew(entry)) take(entry);
      early = [];
      settle();
    }, nothing);
    const timer = setTimeout(
      () => {
        finish();
        const what = `${seen} of ${count} request${count === 1 ? '' : 's'} matching ${describeFilter(matching)} arrived within ${Math.min(timeout, MAX_WAIT_MS)} ms`;
        reject(new WaitTimeoutError(`${what}; ${closestMisses(journal, matching)}`, answer()));
      },
      Math.min(timeout, MAX_WAIT_MS),
    );
    const onAbort = (): void => {
      finish();
      reject(new ControlError(499, 'aborted', 'the wait was cancelled'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const byId = (a: RawEntry, b: RawEntry): number => a.id - b.id;

function nothing(): void {}
