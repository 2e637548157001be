/**
 * The registry of named sessions as others use it: a session as it keeps it ({@link SessionEntry}),
 * what it is made with, what it offers ({@link SessionRegistry}); registry.ts makes one.
 */
import type { Clock } from '../clock.js';
import type { Config } from '../config/types.js';
import type { KeyMatcher } from '../pipeline/auth.js';
import type { SessionBacking } from './backing.js';
import type { SessionParts, SharedParts } from './session-parts.js';
import type { SessionSettings } from './settings.js';

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
  /** With a shared backing (a fleet): the last use the backing was told of (ms). */
  told?: number;
  /** With a shared backing: the fleet's store has it (it was made there, or read from there). */
  fleet?: boolean;
}

export interface SessionRegistryOptions {
  shared: SharedParts;
  /** The config served now (`sessions:` follows reloads). */
  config(): Config;
  /** The real clock the ttl runs on (never the virtual one). */
  now?: Clock;
  /**
   * Told of each session dropped (removed, or idle too long), after its parts are. `shared`: what
   * it kept in a shared store goes too; false when only this host lets go of it (another host of
   * the fleet dropped it and cleared the store, or this host stops: `stopping`).
   */
  dropped(id: string, shared: boolean, stopping?: boolean): void;
  /** Whether a session has an admin call in progress (a wait, an event stream): it is not idle then. */
  busy(id: string): boolean;
  /** Why this server cannot hold named sessions (a worker of `serve --workers`); undefined when it can. */
  unavailable?: string;
  /** A fleet's: the sessions are every host's. */
  backing?: SessionBacking;
  /** Told what went wrong with the backing (a Redis away). */
  warn?(message: string): void;
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
  /** `POST /__mockapi/sessions`: a new session, with a key of its own under `sessions.byKey` (on a fleet, every host's once it resolves). */
  create(id: string, withKey: boolean): Created | Promise<Created>;
  /** Removes a session and everything it holds, on every host of a fleet once it resolves; false when there is none. */
  drop(id: string): boolean | Promise<boolean>;
  /** Takes the fleet's sessions (a host that starts, or whose store is back). */
  catchUp(): Promise<void>;
  /** The sessions, oldest first. */
  list(): SessionEntry[];
  /** The requests of each of `entries`, on every host of a fleet (this host's count when the store cannot say). */
  requests(entries: SessionEntry[]): Promise<Map<string, number>>;
  /** The keys made for sessions, each named by its session's id (see `checkAuth`: a match is a {@link NamedKey}). */
  readonly keys: KeyMatcher | undefined;
  /** A request was let in with a session's key (made here, or on another host of a fleet): it is scrubbed from logs and the journal from now on. */
  sawKey(key: string): void;
  readonly size: number;
  /** The settings now in force. */
  settings(): SessionSettings;
  /**
   * `text` (a session's id, or words that name one) as the server shows it — in a list, an answer,
   * a log line —: every key it knows scrubbed by the one redactor, as the journal scrubs them. A
   * session may be named as a key is (both may be `mk_…`), and a key is never shown.
   */
  shown(text: string): string;
  /** Why this server cannot hold named sessions; undefined when it can. */
  readonly unavailable: string | undefined;
  /** A reload: every session's parts follow the new config, and the idle check its new ttl. */
  follow(prev: Config, next: Config): void;
  /** Drops every session and stops the idle check. */
  close(): void;
}
