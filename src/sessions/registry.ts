import { hash } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Config } from '../config/types.js';
import { shortOf, type KeyMatcher, type NamedKey } from '../pipeline/auth.js';
import { generateApiKey } from '../config/keys.js';
import { createSessionParts, type SessionParts, type SharedParts } from './session-parts.js';
import { sessionSettings, type SessionSettings } from './settings.js';

/**
 * One named session as the registry keeps it. Idle and never used, it is this object alone (its id,
 * three numbers, a key's matcher when it has one); its parts are made by its first request or admin
 * call that needs them.
 */
export interface SessionEntry {
  readonly id: string;
  /** When it was made, on the server's real clock (ms). */
  readonly created: number;
  /** When a request or an admin call last named it (ms): it is dropped once idle for `sessions.ttl`. */
  lastSeen: number;
  /** Requests it answered (admin calls aside). */
  requests: number;
  /** The key made for it (`sessions.byKey`), as a matcher: the key itself is never kept. */
  readonly key: KeyMatcher | undefined;
  parts: SessionParts | undefined;
}

export interface SessionRegistryOptions {
  shared: SharedParts;
  /** The config served now (`sessions:` follows reloads). */
  config(): Config;
  /** The real clock the ttl runs on (never the virtual one). */
  now?: Clock;
  /** Told of each session dropped (removed, or idle too long), after its parts are. */
  dropped(id: string): void;
  /** Whether a session has an admin call in progress (a wait, an event stream): it is not idle then. */
  busy(id: string): boolean;
  /** Why this server cannot hold named sessions (a worker of `serve --workers`); undefined when it can. */
  unavailable?: string;
}

/** What `create` answers. */
export type Created = { entry: SessionEntry; key?: string } | 'exists' | 'full';

export interface SessionRegistry {
  /** The session `id`, made when new; undefined when `sessions.max` sessions exist already. Marks it seen. */
  enter(id: string): SessionEntry | undefined;
  /** The session `id` when it exists (not marked seen). */
  get(id: string): SessionEntry | undefined;
  /** Its parts, made on first use. */
  partsOf(entry: SessionEntry): SessionParts;
  /** `POST /__mockapi/sessions`: a new session, with a key of its own under `sessions.byKey`. */
  create(id: string, withKey: boolean): Created;
  /** Removes a session and everything it holds; false when there is none. */
  drop(id: string): boolean;
  /** The sessions, oldest first. */
  list(): SessionEntry[];
  /** The keys made for sessions, each named by its session's id (see `checkAuth`: a match is a {@link NamedKey}). */
  readonly keys: KeyMatcher | undefined;
  readonly size: number;
  /** The settings now in force. */
  settings(): SessionSettings;
  /** Why this server cannot hold named sessions; undefined when it can. */
  readonly unavailable: string | undefined;
  /** A reload: every session's parts follow the new config, and the idle check its new ttl. */
  follow(prev: Config, next: Config): void;
  /** Drops every session and stops the idle check. */
  close(): void;
}

/** The registry of named sessions: at most `sessions.max`, each dropped once idle for `sessions.ttl`. */
export function createSessionRegistry(options: SessionRegistryOptions): SessionRegistry {
  const now = options.now ?? Date.now;
  const entries = new Map<string, SessionEntry>();
  // The keys made for sessions, by digest: a key names its session as a key of `keys:` names itself.
  const keyed = new Map<string, NamedKey>();
  let keys: KeyMatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const settings = (): SessionSettings => sessionSettings(options.config());

  /** The idle check runs a few times per ttl (at least every minute), so a session goes at most a quarter of its ttl late. */
  function arm(): void {
    if (closed || timer !== undefined || entries.size === 0) return;
    const period = Math.max(50, Math.min(60_000, Math.floor(settings().ttlMs / 4)));
    timer = setTimeout(sweep, period);
    timer.unref();
  }

  function sweep(): void {
    timer = undefined;
    const ttl = settings().ttlMs;
    const at = now();
    for (const entry of [...entries.values()]) {
      if (at - entry.lastSeen < ttl) continue;
      if (options.busy(entry.id)) entry.lastSeen = at;
      else drop(entry.id);
    }
    arm();
  }

  function make(id: string, key: string | undefined): SessionEntry {
    const at = now();
    const digest = key === undefined ? undefined : sha256(key);
    const entry: SessionEntry = {
      id,
      created: at,
      lastSeen: at,
      requests: 0,
      key: digest === undefined ? undefined : { digest, short: shortOf(digest) },
      parts: undefined,
    };
    entries.set(id, entry);
    if (digest !== undefined) {
      keyed.set(digest, { name: id, index: 0, short: shortOf(digest) });
      keys = { digest: '', short: '', named: keyed }; // '' matches no digest: only the named keys do
    }
    arm();
    return entry;
  }

  function drop(id: string): boolean {
    const entry = entries.get(id);
    if (entry === undefined) return false;
    entries.delete(id);
    if (entry.key !== undefined) {
      keyed.delete(entry.key.digest);
      if (keyed.size === 0) keys = undefined;
    }
    entry.parts?.close();
    entry.parts = undefined;
    options.dropped(id);
    return true;
  }

  return {
    enter(id) {
      let entry = entries.get(id);
      if (entry === undefined) {
        if (entries.size >= settings().max) return undefined;
        entry = make(id, undefined);
      }
      entry.lastSeen = now();
      return entry;
    },
    get: (id) => entries.get(id),
    partsOf(entry) {
      entry.parts ??= createSessionParts(entry.id, options.shared, entry.key);
      return entry.parts;
    },
    create(id, withKey) {
      if (entries.has(id)) return 'exists';
      if (entries.size >= settings().max) return 'full';
      const key = withKey ? generateApiKey() : undefined;
      const entry = make(id, key);
      return key === undefined ? { entry } : { entry, key };
    },
    drop,
    list: () => [...entries.values()],
    get keys() {
      return keys;
    },
    get size() {
      return entries.size;
    },
    settings,
    unavailable: options.unavailable,
    follow(prev, next) {
      for (const entry of entries.values()) entry.parts?.follow(prev, next);
      // A shorter ttl is checked from now on, not after the longer period armed before.
      if (timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
      }
      arm();
    },
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      for (const id of [...entries.keys()]) drop(id);
    },
  };
}

function sha256(text: string): string {
  return hash('sha256', text, 'binary'); // as auth.ts digests keys: latin1, one character per byte
}
