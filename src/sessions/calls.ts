import { ControlError } from '../control/control-error.js';
import type { AdminCall } from '../stubs/calls.js';
import { newSessionId, sessionIdProblem } from './ids.js';
import type { SessionRegistry } from './registry.js';
import {
  sessionInfo,
  shared,
  tooManySessions,
  type SessionCounts,
  type SessionCreated,
  type SessionInfo,
} from './routes.js';
import { SESSION_PREFIX } from './step.js';

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

/** The calls in process, over the server's registry; `url` is the server's base URL. */
export function localSessionCalls(registry: SessionRegistry, counts: SessionCounts, url: string): SessionCalls {
  return {
    async create(options = {}) {
      const id = options.id ?? newSessionId();
      const problem = sessionIdProblem(id);
      if (problem !== undefined) throw new ControlError(400, 'bad_request', problem);
      const created = await shared(registry.create(id, registry.settings().byKey));
      if (created === 'exists')
        throw new ControlError(409, 'session_exists', `there is a session ${JSON.stringify(id)} already`);
      if (created === 'full') throw tooManySessions(registry.settings().max);
      return {
        id,
        url: `${url}${SESSION_PREFIX}${id}`,
        ...(created.key === undefined ? {} : { key: created.key }),
        headers: { 'X-Mockapi-Session': id },
      };
    },
    async delete(id) {
      const problem = sessionIdProblem(id);
      if (problem !== undefined) throw new ControlError(400, 'bad_request', problem);
      if (!(await shared(registry.drop(id))))
        throw new ControlError(404, 'not_found', `no session ${JSON.stringify(id)}`);
    },
    async list() {
      const entries = registry.list();
      const requests = await registry.requests(entries);
      return entries.map((entry) => sessionInfo(entry, counts, requests.get(entry.id)));
    },
  };
}
