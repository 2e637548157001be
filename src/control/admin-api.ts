/**
 * The admin API under `/__mockapi/`: the guard, the route tables merged (its own, control-routes.ts,
 * and each capability's), the session a call acts on, and the one JSON writer with its error mapping.
 * The route contract is admin-routes.ts; the event stream admin-events.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { JSON_CONTENT_TYPE } from '../answer/responses.js';
import { createAdminGuard, type AdminGuardOptions } from './admin-guard.js';
import { ControlError, WaitTimeoutError } from './control-error.js';
import type { ControlPlane } from './control-plane.js';
import type { OtherWorkers } from './other-workers.js';
import { endAfterBody } from '../http/http-limits.js';
import { hasBody } from '../http/request-body.js';
import {
  AdminAnswer,
  mergeRoutes,
  STREAMING,
  type AdminSession,
  type RouteTable,
  type SessionLookup,
} from './admin-routes.js';
import { controlRoutes, type AdminState } from './control-routes.js';

export {
  AdminAnswer,
  mergeRoutes,
  type AdminSession,
  type Route,
  type RouteTable,
  type SessionLookup,
} from './admin-routes.js';
export { DROPPED, EVENT_BACKLOG_LIMIT } from './admin-events.js';

/** The admin API: handles every path under `/__mockapi/` but health; `close` ends open streams and waits. */
export interface AdminApi {
  /**
   * `session`: the session the front found the call naming (`X-Mockapi-Session`, a `/__session/<id>/` prefix); `?session=` wins over it.
   * `unreadable`: why the request's path could not be read (bad percent-encoding, a NUL byte): after
   * the guard's checks, the call is a 400 `bad_request` saying so.
   */
  handle(req: IncomingMessage, res: ServerResponse, path: string, session?: string, unreadable?: string): void;
  /** Ends every event stream and pending wait, so a graceful stop does not wait for them. */
  close(): void;
  /** Ends the event streams and waits of one session (dropped), with `message` in a 410 `session_dropped` for a wait. */
  closeSession(id: string, message: string): void;
  /** How many waits and event streams a session has open (one that has any is in use, not idle). */
  opened(id: string): number;
}

const PREFIX = '/__mockapi/';

/**
 * The admin API under `/__mockapi/`: a thin HTTP layer over {@link ControlPlane}. Every answer is JSON
 * (events excepted), carries no CORS headers and `Cache-Control: no-store`; admin calls are never
 * journaled or counted. Unknown paths are 404, known paths with another method 405.
 * In a `serve --workers` worker, `workers` makes it answer for the whole server: reads
 * gather every worker's journal, waits and event streams listen on every worker, writes are
 * applied here (which validates them) and then on every other worker before the answer.
 */
export function createAdminApi(
  control: ControlPlane,
  guardOptions: AdminGuardOptions,
  workers?: OtherWorkers,
  tables: RouteTable[] = [],
  sessions?: SessionLookup,
): AdminApi {
  const guard = createAdminGuard(guardOptions);
  const admin: AdminState = { control, workers, open: new Map(), closing: false };
  const { open } = admin;
  const defaultSession: AdminSession = { id: '', plane: control };
  const routes = mergeRoutes(controlRoutes(admin), ...tables);

  /** The session the call acts on: `?session=`, else the one the front found, else the default one. */
  function sessionOf(query: URLSearchParams, named: string | undefined): AdminSession {
    const id = query.get('session') ?? named;
    if (id === undefined || sessions === undefined) return defaultSession;
    return sessions(id);
  }

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    named?: string,
    unreadable?: string,
  ): Promise<void> {
    const refusal = guard(req);
    if (refusal !== undefined) return answer(res, refusal.status, { error: refusal.code, message: refusal.message });
    if (admin.closing) return answer(res, 503, { error: 'stopping', message: 'the server is stopping' });
    if (unreadable !== undefined) return answer(res, 400, { error: 'bad_request', message: unreadable });
    const relative = path.slice(PREFIX.length).replace(/\/+$/, '');
    const slash = relative.indexOf('/');
    // `scenarios/<name>`, `stubs/<id>`: the route `name/*`, with the rest of the path as its argument.
    const isNamed =
      slash > 0 &&
      relative.length > slash + 1 &&
      routes[relative] === undefined &&
      routes[`${relative.slice(0, slash)}/*`] !== undefined;
    const methods = routes[isNamed ? `${relative.slice(0, slash)}/*` : relative];
    const method = req.method ?? 'GET';
    const route = methods?.[method];
    if (route === undefined) return answerNoRoute(res, path, method, methods);
    const url = req.url ?? '/';
    const query = new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');
    try {
      const session = sessionOf(query, named);
      const ready = session.id === '' || !sessionBound(routes, relative) ? undefined : session.ready;
      if (ready !== undefined) await ready;
      const result = await route(req, res, query, isNamed ? decodeRest(relative.slice(slash + 1)) : '', session);
      if (result instanceof AdminAnswer) answer(res, result.status, result.body);
      else if (result !== STREAMING) answer(res, 200, result);
    } catch (err) {
      answerFailure(res, err);
    }
  }

  return {
    handle(req, res, path, named, unreadable) {
      handle(req, res, path, named, unreadable).catch((err: unknown) => {
        if (!res.headersSent) answer(res, 500, { error: 'internal_error', message: (err as Error).message });
        else res.destroy();
      });
    },
    close() {
      admin.closing = true;
      for (const end of [...open.keys()]) end();
    },
    closeSession(id, message) {
      for (const [end, session] of [...open]) if (session === id) end(message);
    },
    opened(id) {
      let count = 0;
      for (const session of open.values()) if (session === id) count++;
      return count;
    },
  };
}

/** The 404 of a path no table has, or the 405 of a path that has not `method`. */
function answerNoRoute(
  res: ServerResponse,
  path: string,
  method: string,
  methods: RouteTable[string] | undefined,
): void {
  if (methods === undefined)
    return answer(res, 404, { error: 'not_found', message: `No admin call ${method} ${path}` });
  return answer(
    res,
    405,
    { error: 'method_not_allowed', message: `${path} takes ${Object.keys(methods).join(', ')}` },
    { allow: Object.keys(methods).join(', ') },
  );
}

/** A call's failure as its answer: a wait's timeout 408 with what came, a {@link ControlError} its status; anything else is rethrown (a 500). */
function answerFailure(res: ServerResponse, err: unknown): void {
  if (err instanceof WaitTimeoutError)
    return answer(res, 408, { error: err.code, message: err.message, requests: err.requests });
  if (err instanceof ControlError) return answer(res, err.status, { error: err.code, message: err.message });
  throw err;
}

/** The `*` part of a named route's path, percent-decoded (the path was read undecoded). */
function decodeRest(rest: string): string {
  try {
    return decodeURIComponent(rest);
  } catch {
    return rest;
  }
}

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const bytes = Buffer.from(JSON.stringify(body), 'utf8');
  res.writeHead(status, {
    'content-type': JSON_CONTENT_TYPE,
    'content-length': String(bytes.length),
    'cache-control': 'no-store',
    ...headers,
  });
  // A refusal given before the body was read (403, 415…) ends once the client stopped sending.
  if (hasBody(res.req) && !res.req.complete) endAfterBody(res.req, res, bytes);
  else res.end(bytes);
}

/** Admin calls that read or change no session's parts (the sessions' own list, the keys, the clients): they never make a session's parts. */
const SESSIONLESS = new Set(['', 'sessions', 'clients', 'rotate-key']);

/** Whether the call at `relative` acts on its session's parts (it waits for them to be ready on a fleet). */
function sessionBound(routes: RouteTable, relative: string): boolean {
  const head =
    relative.includes('/') && routes[relative] === undefined ? relative.slice(0, relative.indexOf('/')) : relative;
  return !SESSIONLESS.has(head);
}
