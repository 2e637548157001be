import type { Clock } from '../clock.js';
import type { AuthVerdict, KeyMatcher } from '../pipeline/auth.js';
import type { AnswerBody } from '../answer/answer-body.js';
import { keptAnswerBody } from './journal-answer.js';
import { NO_REDACTOR, type Redactor } from '../redact/redactor.js';
import type { JournalNote, RawEntry, Step } from './journal-entry.js';
import type { StreamSummary, Violation } from '../wire-types.js';
import { JOURNAL_BODY_LIMIT } from '../http/request-body.js';

export { JOURNAL_BODY_LIMIT };

/** Which requests a query, a count or a wait is about (query parameters). */
export interface RequestFilter {
  /** Any case. */
  method?: string;
  /** The path as sent, with `/mock`; a trailing `*` matches any rest. */
  path?: string;
  status?: number;
  /** `"GET /users/:id"`. */
  endpoint?: string;
  step?: Step;
  /** Only entries with an `id` above this. */
  since?: number;
  /** Only the last `limit` matching entries. */
  limit?: number;
  /** true: only requests that broke the OpenAPI description; false: only those that did not. */
  violations?: boolean;
  /** Only requests noted as a futile retry (true), or only the others (false). */
  futile?: boolean;
}

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

  /** Fills `entry` with the request's fields: every field written, so the pool keeps one shape. */
  function fill(
    entry: RawEntry,
    x: JournalSource,
    status: number,
    note: JournalNote,
    ms: number,
    id: number,
  ): RawEntry {
    entry.id = id;
    entry.time = clock() - ms;
    entry.method = x.method;
    entry.url = x.req.url ?? '/';
    entry.rawHeaders = x.req.rawHeaders;
    entry.body = x.journalBody;
    entry.bodyTruncated = x.bodyTruncated;
    entry.endpoint = x.endpoint === undefined ? null : x.endpoint.key;
    entry.response = x.answer;
    entry.status = status;
    entry.ms = ms;
    entry.step = x.step;
    entry.violations = x.violations;
    entry.note = note;
    entry.key = x.compiled.key;
    entry.previousKey = journal.previousKey;
    entry.sessionKey = x.scope?.key;
    entry.keyVerdict = x.keyVerdict;
    // A copy: a fixed answer's list is rewritten in place by the next answer (its RateLimit-* values).
    entry.answerHeaders = x.answerHeaders === undefined ? NO_HEADERS : x.answerHeaders.slice();
    const kept = keptAnswerBody(x.answerBody);
    entry.answerBody = kept;
    entry.answerBodyTruncated = kept !== x.answerBody;
    entry.redactor = x.compiled.redactor;
    entry.stream = x.stream;
    entry.view = undefined;
    return entry;
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
        const entry = fill(ring[advance()] as RawEntry, x, status, note, ms, newId());
        x.journalId = entry.id;
        if (listeners.length > 0) tell(entry, false);
      } else if (listeners.length > 0) {
        const entry = fill(scratch, x, status, note, ms, newId());
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

/** A copy of `entry` for whoever keeps it after the call that gave it: the journal reuses its entries. */
export function copyEntry(entry: RawEntry): RawEntry {
  return { ...entry };
}

/** `capacity` blank entries. */
function poolOf(capacity: number): RawEntry[] {
  return Array.from({ length: capacity }, blankEntry);
}

const NO_MATCHER: KeyMatcher = { digest: '', short: '' };

/** An entry with every field present (one hidden class for the whole pool) and nothing in it. */
function blankEntry(): RawEntry {
  return {
    id: 0,
    time: 0,
    method: '',
    url: '',
    rawHeaders: NO_HEADERS,
    body: undefined,
    bodyTruncated: false,
    endpoint: null,
    response: null,
    status: 0,
    ms: 0,
    step: 'response',
    violations: undefined,
    note: undefined,
    key: NO_MATCHER,
    previousKey: undefined,
    sessionKey: undefined,
    keyVerdict: undefined,
    answerHeaders: NO_HEADERS,
    answerBody: undefined,
    answerBodyTruncated: false,
    redactor: NO_REDACTOR,
    view: undefined,
  };
}

/** Drops what a pooled entry points at (a request's headers and body), so a clear frees them. */
function release(entry: RawEntry): void {
  entry.rawHeaders = NO_HEADERS;
  entry.body = undefined;
  entry.answerHeaders = NO_HEADERS;
  entry.answerBody = undefined;
  entry.view = undefined;
}

const NO_HEADERS: readonly string[] = [];

/** Whether `entry` is one `filter` asks about (`limit` aside). */
export function matchesFilter(entry: RawEntry, filter: RequestFilter): boolean {
  if (filter.since !== undefined && entry.id <= filter.since) return false;
  if (filter.status !== undefined && entry.status !== filter.status) return false;
  if (filter.step !== undefined && entry.step !== filter.step) return false;
  if (filter.violations !== undefined && (entry.violations?.length ?? 0) > 0 !== filter.violations) return false;
  if (filter.futile !== undefined && isFutile(entry) !== filter.futile) return false;
  if (filter.endpoint !== undefined && entry.endpoint !== filter.endpoint) return false;
  if (filter.method !== undefined && entry.method.toUpperCase() !== filter.method.toUpperCase()) return false;
  if (filter.path !== undefined) {
    const q = entry.url.indexOf('?');
    const path = q === -1 ? entry.url : entry.url.slice(0, q);
    if (filter.path.endsWith('*') ? !path.startsWith(filter.path.slice(0, -1)) : path !== filter.path) return false;
  }
  return true;
}

/** Whether an entry was noted as a futile retry (a request repeated after a spent budget refused it). */
export function isFutile(entry: { note: JournalNote }): boolean {
  const { note } = entry;
  if (note === undefined) return false;
  return typeof note === 'string' ? note.includes('futile retry (') : note.some((n) => n.includes('futile retry ('));
}
