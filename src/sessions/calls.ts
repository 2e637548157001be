import { jsonBody } from '../control/call-input.js';
import type { AdminCall } from '../stubs/calls.js';
import type { SessionRegistry } from './registry.js';
import {
  createSession,
  deleteSession,
  sessionInfo,
  type SessionCounts,
  type SessionCreated,
  type SessionInfo,
} from './routes.js';

/** The sessions of a server, on `startMockServer`'s object and on `connectMockServer` (the admin API's `/__mockapi/sessions`). */
export interface SessionCalls {
  /** `POST /__mockapi/sessions`: a new session (`id` given, or made), with its URL, header and (under `sessions.byKey`) its key. */
  create(options?: { id?: string }): Promise<SessionCreated>;
  /** `DELETE /__mockapi/sessions/<id>`: drops the session and everything it holds. */
  delete(id: string): Promise<void>;
  /** `GET /__mockapi/sessions`: every session with its counts (only its own, for a connection that names one). */
  list(): Promise<SessionInfo[]>;
}

/** The calls over HTTP. */
export function httpSessionCalls(call: AdminCall): SessionCalls {
  return {
    create: (options = {}) =>
      call<SessionCreated>('POST', 'sessions', options.id === undefined ? {} : { id: options.id }),
    delete: async (id) => {
      await call('DELETE', `sessions/${encodeURIComponent(id)}`);
    },
    list: async () => (await call<{ sessions: SessionInfo[] }>('GET', 'sessions')).sessions,
  };
}

/**
 * The calls in process, over the server's registry; `url` is the server's base URL. Each does what
 * the admin route does with the body `connectMockServer` sends: the same answers, the same 400s.
 */
export function localSessionCalls(registry: SessionRegistry, counts: SessionCounts, url: string): SessionCalls {
  return {
    create: async (options = {}) =>
      createSession(registry, jsonBody(options.id === undefined ? {} : { id: options.id }), '', url),
    delete: (id) => deleteSession(registry, id, ''),
    async list() {
      const entries = registry.list();
      const requests = await registry.requests(entries);
      return entries.map((entry) => sessionInfo(entry, counts, registry.shown, requests.get(entry.id)));
    },
  };
}
