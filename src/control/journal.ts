/**
 * The request journal: a ring of the last requests, pooled entries overwritten in place
 * (journal-pool.ts), the endpoints' and answers' counts, and listeners told of each new entry.
 * Which entries a query is about: journal-filter.ts.
 */
import type { Clock } from '../clock.js';
import type { AuthVerdict, KeyMatcher } from '../pipeline/auth.js';
import type { AnswerBody } from '../answer/answer-body.js';
import type { Redactor } from '../redact/redactor.js';
import type { JournalNote, RawEntry, Step } from './journal-entry.js';
import type { StreamSummary, Violation } from '../wire-types.js';
import { JOURNAL_BODY_LIMIT } from '../http/request-body.js';
import { matchesFilter, type RequestFilter } from './journal-filter.js';
import { blankEntry, fillEntry, release } from './journal-pool.js';

export { JOURNAL_BODY_LIMIT };
export { isFutile, matchesFilter, type RequestFilter } from './journal-filter.js';
export { copyEntry } from './journal-pool.js';

/** What the handler hands the journal when it has answered a request: the fields of its exchange. */
export interface JournalSource {
  req: { readonly url?: string; readonly rawHeaders: string[] };
  method: string;
  compiled: { readonly key: KeyMatcher; readonly redactor: Redactor };
  /** The request's session: a key made for it alone (`sessions.byKey`) is its current key. */
  scope?: { readonly key: KeyMatcher | undefined };
  /** How the credential matched `compiled.key`, when it passed auth with it. */
  keyVerdict?: AuthVerdict | undefined;
  step: Step;
  endpoint: { readonly key: string } | undefined;
  /** The answer's name or position; null when none answered. */
  answer: string | null;
  /** The body's first 64 KiB, when it was read. */
  journalBody: Buffer | undefined;
  bodyTruncated: boolean;
  /** The answer written: its header list and body, kept by reference (a large body's first 64 KiB). */
  answerHeaders?: readonly string[];
  answerBody?: AnswerBody | undefined;
  /** Set to the entry's id once journaled (an object's history names the request that changed it). */
  journalId?: number;
  /** The request's violations of the OpenAPI description, when it was validated. */
  violations?: readonly Violation[] | undefined;
  /** A streamed answer's summary (events, how it ended, timing). */
  stream?: StreamSummary | undefined;
}

/** Told of each new entry; `heard` when another `serve --workers` worker recorded it. */
export type JournalListener = (entry: RawEntry, heard: boolean) => void;

/** The request journal: a ring of the last `capacity` requests, and listeners told of each new one. */
export interface Journal {
  /** True when a request must be recorded: entries are kept, or someone listens. */
  readonly enabled: boolean;
  readonly capacity: number;
  /**
   * Called by the handler as the answer is written (just before; just after, for a fault), `ms` after the request arrived (the handler's
   * reading, shared with the log line). Counts the endpoint's requests even when disabled.
   */
  record(x: JournalSource, status: number, note: JournalNote, ms: number): void;
  /**
   * Tells the listeners of an entry another `serve --workers` worker recorded (forwarded while a
   * wait or an event stream here listens on every worker); it is not kept here.
   */
  hear(entry: RawEntry): void;
  /** Matching entries with `id > since`, oldest first, the last `limit` of them. */
  list(filter: RequestFilter): RawEntry[];
  clear(): void;
  /** Keeps the newest `capacity` entries (a reload may change `server.journal`). */
  resize(capacity: number): void;
  /**
   * Calls `listener` with every entry recorded from now on (`heard`: another worker's, see
   * {@link Journal.hear}); returns the unsubscribe function.
   */
  listen(listener: JournalListener): () => void;
  /** Requests each endpoint (`"GET /users/:id"`) got since the start or the last clear. */
  endpointCounts(): ReadonlyMap<string, number>;
  /** Requests each answer of each endpoint answered (endpoint key → answer name → count), as `endpointCounts`. */
  answerCounts(): ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** The key matcher before the last change of `apiKey` (a rotation or an edit), for `credential.key`. */
  previousKey: KeyMatcher | undefined;
}

/**
 * Creates a journal of `capacity` entries (0 = none kept) whose times read `clock`. Ids count 1, 2,
 * 3…, or come from `nextId` (a `serve --workers` worker: see workers/ids.ts); either way a worker keeps
 * its own entries, and the admin API gathers every worker's when asked.
 */
export function createJournal(capacity: number, clock: Clock, nextId?: () => number): Journal {
  // The ring is a pool of entries whose fields `record` overwrites: once it is full, a request
  // allocates no entry, so the journal adds no young objects for the collector to copy and promote.
  // It grows to `capacity` as requests come, so a journal that saw few requests (a session's) holds
  // few entries. Whoever keeps an entry past the call that gave it (a wait) keeps a copy ({@link copyEntry}).
  let ring: RawEntry[] = [];
  let next = 0; // where the next entry goes
  let size = 0;
  let listeners: JournalListener[] = [];
  let lastId = 0;
  const newId = nextId ?? (() => ++lastId);
  const counts = new Map<string, number>();
  const answerCounts = new Map<string, Map<string, number>>();
  function countAnswer(endpoint: string, answer: string | null): void {
    if (answer === null) return;
    let byName = answerCounts.get(endpoint);
    if (byName === undefined) answerCounts.set(endpoint, (byName = new Map()));
    byName.set(answer, (byName.get(answer) ?? 0) + 1);
  }
  // An entry only told to listeners (no entries kept).
  const scratch = blankEntry();

  function* oldestFirst(): Generator<RawEntry> {
    const cap = ring.length;
    for (let i = 0; i < size; i++) yield ring[(next - size + i + cap) % cap] as RawEntry;
  }

  /** The slot the next entry goes in, the oldest entry's when the ring is full. */
  function advance(): number {
    const at = next;
    if (at === ring.length) ring.push(blankEntry()); // the pool grows until it holds `capacity` entries
    next = (next + 1) % capacity;
    if (size < capacity) size++;
    return at;
  }

  function tell(entry: RawEntry, heard: boolean): void {
    for (const listener of listeners) listener(entry, heard);
  }

  const journal: Journal = {
    previousKey: undefined,
    get enabled() {
      return capacity > 0 || listeners.length > 0;
    },
    get capacity() {
      return capacity;
    },
    record(x, status, note, ms) {
      if (x.endpoint !== undefined) {
        counts.set(x.endpoint.key, (counts.get(x.endpoint.key) ?? 0) + 1);
        countAnswer(x.endpoint.key, x.answer);
      }
      if (capacity > 0) {
        const entry = fillEntry(
          ring[advance()] as RawEntry,
          x,
          status,
          note,
          ms,
          newId(),
          clock(),
          journal.previousKey,
        );
        x.journalId = entry.id;
        if (listeners.length > 0) tell(entry, false);
      } else if (listeners.length > 0) {
        const entry = fillEntry(scratch, x, status, note, ms, newId(), clock(), journal.previousKey);
        x.journalId = entry.id;
        tell(entry, false);
      }
    },
    hear(entry) {
      tell(entry, true);
    },
    list(filter) {
      const found: RawEntry[] = [];
      for (const entry of oldestFirst()) if (matchesFilter(entry, filter)) found.push(entry);
      return filter.limit === undefined || found.length <= filter.limit
        ? found
        : found.slice(found.length - filter.limit);
    },
    clear() {
      // The pooled entries stay; what they still point at is dropped.
      for (const entry of ring) release(entry);
      next = 0;
      size = 0;
      counts.clear();
      answerCounts.clear();
    },
    resize(to) {
      if (to === capacity) return;
      ring = [...oldestFirst()].slice(Math.max(0, size - to));
      capacity = to;
      size = ring.length;
      next = capacity === 0 ? 0 : size % capacity;
    },
    listen(listener) {
      listeners = [...listeners, listener];
      return () => {
        listeners = listeners.filter((l) => l !== listener);
      };
    },
    endpointCounts: () => counts,
    answerCounts: () => answerCounts,
  };
  return journal;
}
