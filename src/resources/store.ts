/**
 * Where objects, their history, lifecycle moves due and idempotency keys are kept: one small
 * interface with an in-memory implementation (one process) and a Redis one (`--workers`, a fleet
 * of hosts). Every piece of state is keyed by a scope (a session, `''` for the default one) and
 * a collection name, so sessions plug in without changing the store. Reads and writes may answer
 * at once (memory) or later (Redis): callers handle both ({@link MaybePromise}).
 */

export type MaybePromise<T> = T | Promise<T>;

/**
 * `then(value)` now when `value` is there (the in-memory store), after it when it comes (Redis): the
 * hot operations (a retrieve, a page, a create) then cost no promise in one process.
 */
export function after<T, R>(value: MaybePromise<T>, then: (value: T) => MaybePromise<R>): MaybePromise<R> {
  return value instanceof Promise ? value.then(then) : then(value);
}

/** One stored object: its JSON text and what the store keeps beside it. */
export interface StoredObject {
  readonly id: string;
  /** The object as JSON text (what a retrieve answers). */
  readonly text: string;
  /** 1 at creation, one more at each write: a write naming an older version is refused. */
  readonly version: number;
  /** Its place in the collection's creation order (cursors and pages). */
  readonly seq: number;
  /** Which part of the collection it belongs to: its path parameters' values (`''` without). */
  readonly parent: string;
  /** When it entered its present status (server clock, ms): the lifecycle counts from there. */
  readonly since: number;
  /** When it was created (server clock, ms). */
  readonly created: number;
}

/** What happened to an object: the inspector shows it. */
export interface HistoryEntry {
  /** Server clock, ms. */
  readonly at: number;
  readonly kind: 'created' | 'updated' | 'replaced' | 'action' | 'lifecycle' | 'deleted' | 'seeded' | 'admin';
  /** The action's name, the move (`processing → succeeded`), the fields changed. */
  readonly detail?: string;
  /** The journal id of the request that did it (none: seed, admin, lifecycle). */
  readonly request?: number;
}

/** The most history entries kept per object (the oldest go first). */
export const HISTORY_LIMIT = 50;

/** How many deleted objects a collection remembers (the newest), so that a cursor naming one still has a place in a list. */
export const GONE_LIMIT = 10_000;

/** What a new object is made of; the store gives it its `seq` and version 1. */
export interface NewObject {
  readonly id: string;
  readonly text: string;
  readonly parent: string;
  readonly since: number;
  readonly created: number;
}

/** A page of a collection. */
export interface PageQuery {
  /** Only this part of the collection; undefined: all of it. */
  readonly parent?: string;
  readonly order: 'asc' | 'desc';
  /** Start after the object with this id (in `order`): a cursor. */
  readonly after?: string;
  /** Only objects created up to this `seq` (a snapshot: pages read later do not shift). */
  readonly maxSeq?: number;
  /** Matching objects to pass over first (page numbers). */
  readonly skip?: number;
  readonly limit: number;
  /** Which objects belong to the page (filters); undefined: all. */
  readonly test?: (object: StoredObject) => boolean;
}

export interface Page {
  readonly items: readonly StoredObject[];
  /** More matching objects follow the page. */
  readonly hasMore: boolean;
}

/** The objects of one collection in one scope. */
export interface CollectionStore {
  get(id: string): MaybePromise<StoredObject | undefined>;
  /** Adds an object; `undefined` when its id is taken. */
  create(object: NewObject, history: HistoryEntry): MaybePromise<StoredObject | undefined>;
  /**
   * Replaces the object's text when it is still at `version`: the new version, `'conflict'` when
   * another write came first, `undefined` when it is gone.
   */
  replace(
    id: string,
    version: number,
    text: string,
    since: number,
    history: HistoryEntry,
  ): MaybePromise<StoredObject | 'conflict' | undefined>;
  /** Removes it; the object as it was, or undefined when there was none. */
  delete(id: string): MaybePromise<StoredObject | undefined>;
  /** A page; `'unknown-cursor'` when `after` names no object of the collection. */
  page(query: PageQuery): MaybePromise<Page | 'unknown-cursor'>;
  /** How many objects `query` would page through (without `after`, `skip` and `limit`). */
  count(query: Omit<PageQuery, 'after' | 'skip' | 'limit' | 'order'>): MaybePromise<number>;
  /** The highest `seq` given so far (0 when none): a snapshot for page numbers. */
  lastSeq(): MaybePromise<number>;
  /**
   * A shared store's number for a create's next try after its id was taken: above every seq given
   * and every number given before, never the same twice (creates of other workers and hosts run
   * side by side). A store whose creates cannot overlap (memory) has none.
   */
  ticket?(): MaybePromise<number>;
  /** Every object, oldest first. */
  all(): MaybePromise<readonly StoredObject[]>;
  history(id: string): MaybePromise<readonly HistoryEntry[]>;
  /**
   * Names the request (its journal id) in the history entry the write of `version` made; nothing
   * when the object moved on. `object`: what that write gave back, which a store may use to find
   * the object without a lookup by id while it is still the one of `id`.
   */
  tag(id: string, version: number, request: number, object?: StoredObject): MaybePromise<void>;
}

/** A lifecycle move due: the object, and the version it was scheduled for. */
export interface DueMove {
  readonly scope: string;
  readonly collection: string;
  readonly id: string;
  readonly version: number;
  readonly due: number;
}

/** What an idempotency key holds: an answer being made, or the answer made. */
export type IdempotencyRecord =
  | { readonly state: 'pending'; readonly fingerprint: string }
  | { readonly state: 'done'; readonly fingerprint: string; readonly answer: SavedAnswer };

/** An answer as sent, to be sent again byte for byte. */
export interface SavedAnswer {
  readonly status: number;
  /** The header list as written (name, value, name, value…). */
  readonly headers: readonly string[];
  /** The body, base64 (answers may be bytes). */
  readonly body: string;
}

/** The objects of every collection, as `.mockapi/resources.json` and the admin API carry them. */
export interface CollectionDump {
  readonly lastSeq: number;
  readonly objects: ReadonlyArray<StoredObject & { readonly history?: readonly HistoryEntry[] }>;
}

/** Objects, moves due and idempotency keys of every scope. */
export interface ResourceStore {
  /** Whether this store is shared by several processes (then reads may answer later). */
  readonly shared: boolean;
  collection(scope: string, name: string): CollectionStore;
  /** Whether the collection was ever filled (its seed), so a start or reload does not seed it twice. */
  markSeeded(scope: string, name: string): MaybePromise<boolean>;
  /** Empties the scope's collections (all when `names` is undefined) and forgets they were seeded. */
  clear(scope: string, names?: readonly string[]): MaybePromise<void>;
  /** Schedules the next move of an object (replacing any earlier one); `undefined` due: none. */
  schedule(move: Omit<DueMove, 'due'>, due: number | undefined): MaybePromise<void>;
  /** Moves due by `now`, earliest first, at most `limit`; each is handed out once. */
  takeDue(now: number, limit: number): MaybePromise<readonly DueMove[]>;
  /** The earliest due time, for the timer; undefined when nothing is scheduled. */
  nextDue(): MaybePromise<number | undefined>;
  /**
   * Claims an idempotency key: `undefined` when it was free (now pending for this request), else
   * what it holds. Keys live `ttlMs` on the server clock from their first use.
   */
  claimKey(
    scope: string,
    key: string,
    fingerprint: string,
    now: number,
    ttlMs: number,
  ): MaybePromise<IdempotencyRecord | undefined>;
  /** Stores the answer of a claimed key. */
  completeKey(
    scope: string,
    key: string,
    fingerprint: string,
    answer: SavedAnswer,
    now: number,
    ttlMs: number,
  ): MaybePromise<void>;
  /** Lets go of a claimed key whose request got no answer to save (the client went away, a 401…). */
  releaseKey(scope: string, key: string): MaybePromise<void>;
  /** Forgets the scope's idempotency keys. */
  clearKeys(scope: string): MaybePromise<void>;
  /** Tells `listener` each time a shared store is connected again (it may have come back empty). */
  onReconnect?(listener: () => void): void;
  close(): Promise<void>;
}
