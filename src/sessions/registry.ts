/**
 * The registry of named sessions: at most `sessions.max`, each dropped once idle for `sessions.ttl`
 * (registry-idle.ts), on a fleet every host's through a {@link SessionBacking}; its types in
 * registry-types.ts.
 */
import { hash } from 'node:crypto';
import { shortOf, type KeyMatcher, type NamedKey } from '../pipeline/auth.js';
import { generateApiKey } from '../config/keys.js';
import { createSessionSecrets, type SessionSecrets } from './session-secrets.js';
import { createSessionParts } from './session-parts.js';
import { sessionSettings, type SessionSettings } from './settings.js';
import type { SessionBacking, SharedSession } from './backing.js';
import { createIdleCheck } from './registry-idle.js';
import type { Created, SessionEntry, SessionRegistry, SessionRegistryOptions } from './registry-types.js';

export type { SessionBacking, SharedSession } from './backing.js';
export type { Created, SessionEntry, SessionRegistry, SessionRegistryOptions } from './registry-types.js';

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
  const settings = (): SessionSettings => sessionSettings(options.config());
  const idle = createIdleCheck({
    entries,
    now,
    settings,
    backing,
    busy: options.busy,
    drop: (id) => drop(id, true),
    warn,
  });

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
    idle.arm();
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

  backing?.hold?.(() => [...entries.values()].filter((e) => e.fleet === true).map(shared));
  // What was made or dropped while a catch-up's read of the fleet's list was on its way: the list
  // may be older than it (a session made on another host just after the read), so the catch-up
  // neither drops the one nor makes the other again.
  const catchUps = new Set<{ made: Set<string>; dropped: Set<string> }>();
  const heard = (kind: 'made' | 'dropped', id: string): void => {
    for (const c of catchUps) c[kind].add(id);
  };
  backing?.listen({
    added(session) {
      heard('made', session.id);
      (entries.get(session.id) ?? make(session.id, session.key, session.created)).fleet = true;
    },
    dropped: (ids) =>
      ids.forEach((id) => {
        heard('dropped', id);
        drop(id, false);
      }),
  });

  /** A request made the session here: the fleet's too (a session one too many is dropped again, and said). */
  function enterShared(shared: SessionBacking, entry: SessionEntry): void {
    entry.told = entry.lastSeen;
    void shared.entered(shareOf(entry), settings().max).then(
      (result) => {
        if (result === 'ok') entry.fleet = true;
        else {
          warn(
            shown(
              `sessions: session ${entry.id} not kept: sessions.max (${settings().max}) sessions exist in the fleet`,
            ),
          );
          drop(entry.id, false);
        }
      },
      (err: Error) =>
        warn(shown(`sessions: session ${entry.id} is this host's until the store is back (${err.message})`)),
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
      // One time for the store's record and this host's entry: every host then says the same `created`.
      const created = now();
      const made = (): Created => {
        heard('made', id);
        const entry = make(id, digest, created);
        entry.told = entry.lastSeen;
        entry.fleet = backing !== undefined;
        return key === undefined ? { entry } : { entry, key };
      };
      if (backing === undefined) return made();
      return backing
        .create({ id, created, ...(digest === undefined ? {} : { key: digest }) }, settings().max)
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
      const during = { made: new Set<string>(), dropped: new Set<string>() };
      catchUps.add(during);
      let all: Awaited<ReturnType<SessionBacking['list']>>;
      try {
        all = await backing.list(shown);
      } finally {
        catchUps.delete(during);
      }
      const known = new Set(all.map((s) => s.id));
      for (const session of all)
        if (!during.dropped.has(session.id))
          (entries.get(session.id) ?? make(session.id, session.key, session.created)).fleet = true;
      for (const entry of [...entries.values()]) {
        if (known.has(entry.id) || during.made.has(entry.id)) continue;
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
      idle.rearm();
    },
    close() {
      idle.stop();
      // On a fleet, the other hosts keep the sessions: this host only lets go of its parts.
      for (const id of [...entries.keys()]) drop(id, backing === undefined, true);
    },
  };
}

function sha256(text: string): string {
  return hash('sha256', text, 'binary'); // as auth.ts digests keys: latin1, one character per byte
}
