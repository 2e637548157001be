import type { IncomingMessage } from 'node:http';
import { AdminAnswer, type AdminSession, type RouteTable, type SessionLookup } from '../control/admin-api.js';
import { readJsonBody } from '../control/admin-input.js';
import { ControlError } from '../control/control-error.js';
import { newSessionId, sessionIdProblem } from './ids.js';
import type { SessionEntry, SessionRegistry } from './registry.js';
import { SESSION_PREFIX } from './step.js';

/** A session as `GET /__mockapi/sessions` lists it. */
export interface SessionInfo {
  id: string;
  /** ISO times on the server's real clock. */
  created: string;
  lastSeen: string;
  /** Requests it answered. */
  requests: number;
  /** Run-time stubs it holds now. */
  stubs: number;
  /** Admin waits and event streams open on it now. */
  open: number;
  /** Whether a key was made for it (`sessions.byKey`); the key itself is never shown again. */
  key: boolean;
}

/** The answer of `POST /__mockapi/sessions`. */
export interface SessionCreated {
  id: string;
  /** The server's base URL with the session's prefix: `${url}/mock/users/1` is in the session. */
  url: string;
  /** The key made for it, under `sessions.byKey`: valid in this session alone. */
  key?: string;
  /** The header that names it, to send with every request of the session. */
  headers: Record<string, string>;
}

/** What a session's counts come from besides the registry (its stubs, its open waits and streams). */
export interface SessionCounts {
  stubs(id: string): number;
  open(id: string): number;
}

/**
 * A session as the list shows it; `requests`: its requests on every host of a fleet. `shown`: the
 * registry's, so a session named as a key is listed as `<redacted>` (the key never shown).
 */
export function sessionInfo(
  entry: SessionEntry,
  counts: SessionCounts,
  shown: (text: string) => string,
  requests = entry.requests,
): SessionInfo {
  return {
    id: shown(entry.id),
    created: new Date(entry.created).toISOString(),
    lastSeen: new Date(entry.lastSeen).toISOString(),
    requests,
    stubs: counts.stubs(entry.id),
    open: counts.open(entry.id),
    key: entry.key !== undefined,
  };
}

/** The 409 of a server that cannot hold named sessions. */
function unavailable(why: string): ControlError {
  return new ControlError(409, 'sessions_unavailable', why);
}

/** What the sessions' shared store (a fleet's Redis) answered; a 503 `store_unavailable` when it could not. */
export async function shared<T>(result: T | Promise<T>): Promise<T> {
  try {
    return await result;
  } catch (err) {
    if (err instanceof ControlError) throw err;
    throw new ControlError(
      503,
      'store_unavailable',
      `the fleet's Redis cannot take it now (${(err as Error).message}); repeat the call once it is back`,
    );
  }
}

/** The 429 of one session too many. */
export function tooManySessions(max: number): ControlError {
  return new ControlError(
    429,
    'too_many_sessions',
    `there are ${max} sessions already (sessions.max); delete some (DELETE /__mockapi/sessions/<id>) or wait for idle ones to be dropped (sessions.ttl)`,
  );
}

/**
 * How the admin API finds the session a call names: `''` is the default one; a named one is made
 * when its control plane is first asked for (a call that only reads the list makes none).
 */
export function sessionLookup(registry: SessionRegistry): SessionLookup {
  return (id) => {
    const problem = sessionIdProblem(id);
    if (problem !== undefined) throw new ControlError(400, 'bad_request', registry.shown(`session: ${problem}`));
    if (registry.unavailable !== undefined) throw unavailable(registry.unavailable);
    const parts = () => {
      const entry = registry.enter(id);
      if (entry === undefined) throw tooManySessions(registry.settings().max);
      return registry.partsOf(entry);
    };
    return {
      id,
      get plane() {
        return parts().plane;
      },
      get others() {
        return parts().link;
      },
      get ready() {
        return parts().ready;
      },
    };
  };
}

/** `http://host:port` as the caller reached the server. */
function originOf(req: IncomingMessage): string {
  const secure = (req.socket as { encrypted?: boolean }).encrypted === true;
  return `${secure ? 'https' : 'http'}://${req.headers.host ?? '127.0.0.1'}`;
}

/**
 * The admin routes of sessions: `POST /__mockapi/sessions` (201, a new session), `GET
 * /__mockapi/sessions` (every session with its counts, or only the one the call names),
 * `GET`/`DELETE /__mockapi/sessions/<id>`. A call that names a session sees and drops that one
 * alone: another's id is 404 to it, as an unknown one is.
 */
export function sessionRoutes(registry: SessionRegistry, counts: SessionCounts): RouteTable {
  const visible = (id: string, session: AdminSession): SessionEntry => visibleSession(registry, id, session.id);
  const infos = async (entries: SessionEntry[]): Promise<SessionInfo[]> => {
    const requests = await registry.requests(entries);
    return entries.map((entry) => sessionInfo(entry, counts, registry.shown, requests.get(entry.id)));
  };
  return {
    sessions: {
      GET: async (_req, _res, _query, _rest, session) => {
        const entries = session.id === '' ? registry.list() : [registry.get(session.id)].filter((e) => e !== undefined);
        return { sessions: await infos(entries), max: registry.settings().max };
      },
      POST: async (req, _res, _query, _rest, session) =>
        new AdminAnswer(201, await createSession(registry, await readJsonBody(req), session.id, originOf(req))),
    },
    'sessions/*': {
      GET: async (_req, _res, _query, id, session) => (await infos([visible(id, session)]))[0],
      DELETE: async (_req, _res, _query, id, session) => {
        await deleteSession(registry, id, session.id);
        return { deleted: registry.shown(id) };
      },
    },
  };
}

/** The session `id` as a call that names `named` (`''`: none) may see it: none when it names another (404). */
function visibleSession(registry: SessionRegistry, id: string, named: string): SessionEntry {
  // An id no session can have is the caller's mistake (400), as in the header, query and prefix forms.
  const problem = sessionIdProblem(id);
  if (problem !== undefined) throw new ControlError(400, 'bad_request', registry.shown(problem));
  const entry = named === '' || named === id ? registry.get(id) : undefined;
  if (entry === undefined)
    throw new ControlError(
      404,
      'not_found',
      registry.shown(`no session ${JSON.stringify(id)} (it may have been deleted, or dropped after sessions.ttl idle)`),
    );
  return entry;
}

/**
 * `POST /__mockapi/sessions` with `body`, for a call that names `named` (`''`: none), on the server
 * at `origin`: in process (`server.sessions.create`) and over HTTP alike.
 */
export async function createSession(
  registry: SessionRegistry,
  body: Record<string, unknown>,
  named: string,
  origin: string,
): Promise<SessionCreated> {
  if (registry.unavailable !== undefined) throw unavailable(registry.unavailable);
  for (const field of Object.keys(body))
    if (field !== 'id') throw new ControlError(400, 'bad_request', `unknown field "${field}"; a session takes id`);
  if (body.id !== undefined && typeof body.id !== 'string')
    throw new ControlError(400, 'bad_request', 'id must be a string');
  const id = (body.id as string | undefined) ?? (named === '' ? newSessionId() : named);
  const problem = sessionIdProblem(id);
  if (problem !== undefined) throw new ControlError(400, 'bad_request', registry.shown(problem));
  const created = await shared(registry.create(id, registry.settings().byKey));
  if (created === 'exists')
    throw new ControlError(
      409,
      'session_exists',
      registry.shown(
        `there is a session ${JSON.stringify(id)} already; delete it first, or leave id out for a new one`,
      ),
    );
  if (created === 'full') throw tooManySessions(registry.settings().max);
  return {
    id,
    url: `${origin}${SESSION_PREFIX}${id}`,
    ...(created.key === undefined ? {} : { key: created.key }),
    headers: { 'X-Mockapi-Session': id },
  };
}

/** `DELETE /__mockapi/sessions/<id>`, for a call that names `named` (`''`: none): in process and over HTTP alike. */
export async function deleteSession(registry: SessionRegistry, id: string, named: string): Promise<void> {
  visibleSession(registry, id, named);
  await shared(registry.drop(id));
}
