import type { Config } from '../config/types.js';

/** `sessions:` with its defaults. */
export interface SessionSettings {
  /** `sessions.byKey`: `POST /__mockapi/sessions` makes a key, and a request with that key is in that session. */
  byKey: boolean;
  /** `sessions.max`: named sessions at once. */
  max: number;
  /** `sessions.ttl`: a session idle this long (ms, on the server's real clock) is dropped. */
  ttlMs: number;
}

export const DEFAULT_MAX_SESSIONS = 10_000;
export const DEFAULT_SESSION_TTL_MS = 60 * 60 * 1000;

/** The sessions settings of `config`, defaults filled. */
export function sessionSettings(config: Pick<Config, 'sessions'>): SessionSettings {
  const s = config.sessions;
  return { byKey: s?.byKey ?? false, max: s?.max ?? DEFAULT_MAX_SESSIONS, ttlMs: s?.ttlMs ?? DEFAULT_SESSION_TTL_MS };
}
