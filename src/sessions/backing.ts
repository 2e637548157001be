/** A session as a shared backing keeps it: when it was made, and the digest of its key (never the key). */
export interface SharedSession {
  id: string;
  created: number;
  key?: string;
}

/**
 * Where the sessions are kept beyond this process (a fleet's Redis, src/fleet/sessions.ts): every
 * host holds the list of the fleet's sessions (a few numbers each), made and dropped on every host
 * through it; a session's parts are made on a host when it is first used there.
 */
export interface SessionBacking {
  /** Takes a new session for the whole fleet; every other host knows it when this resolves. */
  create(session: SharedSession, max: number): Promise<'ok' | 'exists' | 'full'>;
  /** A session a request made here (by naming it): the fleet's too, unless `max` are there already (`full` then). */
  entered(session: SharedSession, max: number): Promise<'ok' | 'full'>;
  /** Drops sessions for the whole fleet (their keys in Redis too); every other host dropped them when this resolves. */
  drop(ids: string[]): Promise<void>;
  /** The sessions this host knows as the fleet's, put back when the store restarted without them. */
  hold?(sessions: () => SharedSession[]): void;
  /** When sessions were last used here (ms, the real clock): the fleet keeps the latest any host saw. */
  seen(uses: Map<string, number>): Promise<void>;
  /** Takes off the fleet the sessions no host used since `before` and answers their ids (each host drops what it is given). */
  expire(before: number): Promise<string[]>;
  /** Every session the fleet has (at start, and when the store is back). */
  /** `shown`: what a line naming a session goes through (a session named as a key is redacted there). */
  list(shown: (text: string) => string): Promise<SharedSession[]>;
  /** The requests each session answered, on every host. */
  requests(ids: string[]): Promise<Map<string, number>>;
  /** What the other hosts did: a session made, sessions dropped. */
  listen(events: { added(session: SharedSession): void; dropped(ids: string[]): void }): void;
}
