import { hash } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Config } from '../config/types.js';
import { shortOf, type KeyMatcher, type NamedKey } from '../pipeline/auth.js';
import { generateApiKey } from '../config/keys.js';
import { createSessionSecrets, type SessionSecrets } from './session-secrets.js';
import { createSessionParts, type SessionParts, type SharedParts } from './session-parts.js';
import { sessionSettings, type SessionSettings } from './settings.js';
import type { SessionBacking, SharedSession } from './backing.js';

export type { SessionBacking, SharedSession } from './backing.js';

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

/** The registry of named sessions: at most `sessions.max`, each dropped once idle for `sessions.ttl`. */
export function createSessionRegistry(options: SessionRegistryOptions): SessionRegistry {
  const now = options.now ?? Date.now;
  const { backing } = options;
  const warn = (message: string): void => options.warn?.(message);
  // (a test's runtime may be a bare holder, without a redactor)
  const shown = (text: string): string => options.shared.runtime.holder.current.redactor?.scrub(text) ?? text;
  const entries = new Map<string, SessionEntry>();
  // The keys made for sessions, by digest: a key names its session as a key of `keys:` names itself.
  const keyed = new Map<string, NamedKey>();
  let keys: KeyMatcher | undefined;
  // The keys themselves, for the scrubbing of logs and the journal alone (made when the first is).
  let secrets: SessionSecrets | undefined;
  const secretsOf = (): SessionSecrets => (secrets ??= createSessionSecrets(options.shared.runtime));
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const settings = (): SessionSettings => sessionSettings(options.config());

  /** The idle check runs a few times per ttl (at least every minute), so a session goes at most a quarter of its ttl late. */
  function arm(): void {
    if (closed || timer !== undefined || entries.size === 0) return;
    const period = Math.max(50, Math.min(60_000, Math.floor(settings().ttlMs / 4)));
    timer = setTimeout(() => void sweep(), period);
    timer.unref();
  }

  let sweeping = false;
  async function sweep(): Promise<void> {
    timer = undefined;
    const ttl = settings().ttlMs;
    const at = now();
    if (backing !== undefined) {
      // One sweep at a time: a slow Redis makes the next one wait for this one, not pile up.
      if (!sweeping) {
        sweeping = true;
        await sweepShared(backing, ttl, at).catch((err: Error) => warn(`sessions: ${err.message}`));
        sweeping = false;
      }
      return arm();
    }
    for (const entry of [...entries.values()]) {
      if (at - entry.lastSeen < ttl) continue;
      if (options.busy(entry.id)) entry.lastSeen = at;
      else drop(entry.id, true);
    }
    arm();
  }

  /** On a fleet: this host's uses go to the fleet first, then the sessions no host used for a ttl go, everywhere. */
  async function sweepShared(shared: SessionBacking, ttl: number, at: number): Promise<void> {
    const uses = new Map<string, number>();
    for (const entry of entries.values()) {
      if (options.busy(entry.id)) entry.lastSeen = at;
      if (entry.lastSeen > (entry.told ?? 0)) uses.set(entry.id, (entry.told = entry.lastSeen));
    }
    if (uses.size > 0) await shared.seen(uses);
    const idle = await shared.expire(at - ttl);
    for (const id of idle) drop(id, true);
    if (idle.length > 0) await shared.drop(idle);
  }

  function make(id: string, digest: string | undefined, created = now()): SessionEntry {
    const entry: SessionEntry = {
      id,
      created,
      lastSeen: now(),
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

  const shared = (entry: SessionEntry): SharedSession => ({
    id: entry.id,
    created: entry.created,
    ...(entry.key === undefined ? {} : { key: entry.key.digest }),
  });

  /** Drops the session here (its parts, its key; `shared`: what a shared store keeps of it too); false when there is none here. */
  function drop(id: string, shared: boolean, stopping = false): boolean {
    const entry = entries.get(id);
    if (entry === undefined) return false;
    entries.delete(id);
    if (entry.key !== undefined) {
      keyed.delete(entry.key.digest);
      secrets?.drop(entry.key.digest);
      if (keyed.size === 0) keys = undefined;
    }
    entry.parts?.close();
    entry.parts = undefined;
    options.dropped(id, shared, stopping);
    return true;
  }

  backing?.listen({
    added(session) {
      (entries.get(session.id) ?? make(session.id, session.key, session.created)).fleet = true;
    },
    dropped: (ids) => ids.forEach((id) => drop(id, false)),
  });

  /** A request made the session here: the fleet's too (a session one too many is dropped again, and said). */
  function enterShared(shared: SessionBacking, entry: SessionEntry): void {
    entry.told = entry.lastSeen;
    void shared.entered(shareOf(entry), settings().max).then(
      (result) => {
        if (result === 'ok') entry.fleet = true;
        else {
          warn(`sessions: session ${entry.id} not kept: sessions.max (${settings().max}) sessions exist in the fleet`);
          drop(entry.id, false);
        }
      },
      (err: Error) => warn(`sessions: session ${entry.id} is this host's until the store is back (${err.message})`),
    );
  }
  const shareOf = shared;

  return {
    enter(id) {
      let entry = entries.get(id);
      const at = now();
      if (entry === undefined) {
        if (entries.size >= settings().max) return undefined;
        entry = make(id, undefined);
        if (backing !== undefined) enterShared(backing, entry);
      } else if (backing !== undefined && at - (entry.told ?? 0) >= settings().ttlMs / 4) {
        // Told at once when the fleet's record may be getting old: another host's sweep reads it.
        entry.told = at;
        void backing.seen(new Map([[id, at]])).catch(() => {});
      }
      entry.lastSeen = at;
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
      const digest = key === undefined ? undefined : sha256(key);
      if (key !== undefined && digest !== undefined) secretsOf().add(digest, key);
      const made = (): Created => {
        const entry = make(id, digest);
        entry.told = entry.lastSeen;
        entry.fleet = backing !== undefined;
        return key === undefined ? { entry } : { entry, key };
      };
      if (backing === undefined) return made();
      return backing
        .create({ id, created: now(), ...(digest === undefined ? {} : { key: digest }) }, settings().max)
        .then((result) => (result === 'ok' ? (entries.get(id) === undefined ? made() : 'exists') : result));
    },
    drop(id) {
      if (backing === undefined) return drop(id, true);
      // Dropped in the store and on every host first (even one that did not know it yet): when
      // Redis cannot take it, nothing is dropped, here either.
      return backing.drop([id]).then(() => drop(id, true));
    },
    async catchUp() {
      if (backing === undefined) return;
      const all = await backing.list(shown);
      const known = new Set(all.map((s) => s.id));
      for (const session of all)
        (entries.get(session.id) ?? make(session.id, session.key, session.created)).fleet = true;
      for (const entry of [...entries.values()]) {
        if (known.has(entry.id)) continue;
        // Dropped by the fleet while this host could not hear it: gone here too. Made here while the
        // store was away: the fleet's now.
        if (entry.fleet === true) drop(entry.id, false);
        else enterShared(backing, entry);
      }
    },
    list: () => [...entries.values()],
    async requests(list) {
      const here = new Map(list.map((e) => [e.id, e.requests]));
      if (backing === undefined || list.length === 0) return here;
      const shared = await backing.requests(list.map((e) => e.id)).catch(() => undefined);
      return shared ?? here;
    },
    get keys() {
      return keys;
    },
    sawKey(key) {
      if (secrets?.has(key) === true) return;
      const digest = sha256(key);
      if (keyed.has(digest)) secretsOf().add(digest, key);
    },
    get size() {
      return entries.size;
    },
    settings,
    shown,
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
      // On a fleet, the other hosts keep the sessions: this host only lets go of its parts.
      for (const id of [...entries.keys()]) drop(id, backing === undefined, true);
    },
  };
}

function sha256(text: string): string {
  return hash('sha256', text, 'binary'); // as auth.ts digests keys: latin1, one character per byte
}
