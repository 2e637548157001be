import type { IncomingMessage, ServerResponse } from 'node:http';
import { JSON_CONTENT_TYPE } from '../answer/responses.js';
import { createAdminGuard, type AdminGuardOptions } from './admin-guard.js';
import { ControlError, WaitTimeoutError } from './control-error.js';
import type { ControlPlane, ControlEvent } from './control-plane.js';
import { readFilter, readJsonBody } from './admin-input.js';
import { moveClock, readResetParts, readRotateKey, readScenarioState, readWaitOptions } from './call-input.js';
import { sendInspectorPage } from '../inspector/page-asset.js';
import type { OtherWorkers } from './other-workers.js';
import { mergeClients } from './early-retries.js';
import { endAfterBody } from '../http/http-limits.js';
import { hasBody } from '../http/request-body.js';

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

/** The session an admin call acts on: its id (`''` for the default session) and its control plane. */
export interface AdminSession {
  readonly id: string;
  readonly plane: ControlPlane;
  /** A named session on a host of a fleet: its journal and writes across every host (src/fleet/). */
  readonly others?: OtherWorkers | undefined;
  /** Settles once the session's parts can answer (on a fleet: its shared parts taken); undefined when they can now. */
  readonly ready?: Promise<void> | undefined;
}

/**
 * How the admin API finds the session a call names (src/sessions gives it): the default session
 * for `''`; a named one made on first use. Throws a {@link ControlError} for an id that is not one
 * (400) or when there are `sessions.max` sessions already (429 `too_many_sessions`).
 */
export type SessionLookup = (id: string) => AdminSession;

const PREFIX = '/__mockapi/';
const HEARTBEAT_MS = 15_000;
/**
 * How far an event stream's reader may fall behind: the bytes written to it that its connection
 * has not yet sent (beyond what the kernel's socket buffers hold). A reader that stops reading
 * (`mockapi requests -f | less` left paused) would otherwise make the server keep every event for
 * it, without bound. Past this, the stream is ended with {@link DROPPED}.
 */
export const EVENT_BACKLOG_LIMIT = 4 * 1024 * 1024;
/** The stream's last words when its reader fell behind: an SSE comment, which readers that do not look for it skip. */
export const DROPPED = `: dropped: this reader fell more than ${EVENT_BACKLOG_LIMIT / (1024 * 1024)} MiB behind; reconnect to go on\n\n`;
/** How long a dropped stream's connection may take to send what it holds before it is cut. */
const DROPPED_GRACE_MS = 10_000;

/**
 * One admin call: resolves to the JSON answered with 200, an {@link AdminAnswer} for another
 * status, or throws a {@link ControlError}. `rest` is what a `name/*` route's `*` stands for;
 * `session` the session the call acts on (what a capability keeps per session is looked up by its id).
 */
export type Route = (
  req: IncomingMessage,
  res: ServerResponse,
  query: URLSearchParams,
  rest: string,
  session: AdminSession,
) => Promise<unknown> | unknown;

/** Admin calls by path under `/__mockapi/` (`stubs`, `stubs/*`) and method: what a capability registers. */
export type RouteTable = Record<string, Partial<Record<string, Route>>>;

/** An admin answer with a status other than 200 (201 for a created stub, 400 with a body of its own). */
export class AdminAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

/** Merges route tables: a path's methods from every table (a later table adds methods, it does not replace the path). */
export function mergeRoutes(...tables: RouteTable[]): RouteTable {
  // Without a prototype (the table and each path's methods): a path such as `constructor` or
  // `__proto__`, or a method such as `toString`, finds nothing, never an Object.prototype member.
  const merged: RouteTable = Object.create(null) as RouteTable;
  for (const table of tables)
    for (const [path, methods] of Object.entries(table))
      merged[path] = Object.assign(Object.create(null) as RouteTable[string], merged[path], methods);
  return merged;
}

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
  // What `close` must end (streams and waits), each with the session it belongs to.
  const open = new Map<(dropped?: string) => void, string>();
  let closing = false;
  const defaultSession: AdminSession = { id: '', plane: control };
  // Another worker's part of the journal is asked only for the default session: a named session's
  // requests are answered by the worker that holds it (see docs/sessions.md, "Sessions and workers").
  // On a fleet, a named session has a link of its own to every host.
  const othersOf = (s: AdminSession): OtherWorkers | undefined => (s.id === '' ? workers : s.others);

  const own: RouteTable = {
    requests: {
      GET: async (_req, _res, query, _rest, s) => {
        const filter = readFilter(query);
        const others = othersOf(s);
        return { requests: others === undefined ? s.plane.requests(filter) : await others.requests(filter) };
      },
      DELETE: async (_req, _res, _query, _rest, s) => {
        s.plane.clearRequests();
        await othersOf(s)?.others({ op: 'clear' });
        return { requests: [] };
      },
    },
    'requests/count': {
      GET: async (_req, _res, query, _rest, s) => {
        const filter = readFilter(query);
        const others = othersOf(s);
        return { count: others === undefined ? s.plane.countRequests(filter) : await others.count(filter) };
      },
    },
    'requests/wait': { GET: (req, _res, query, _rest, s) => waitRoute(req, query, s) },
    events: {
      GET: async (req, res, _query, _rest, s) => {
        // With workers: once every other worker forwards its requests here, so a client that lists
        // the journal after the stream opened misses none between the two.
        const unwatch = await othersOf(s)?.watch();
        if (closing || req.socket.destroyed) {
          unwatch?.();
          if (closing) throw new ControlError(503, 'stopping', 'the server is stopping');
          return STREAMING; // the client went away meanwhile
        }
        return streamEvents(res, s, unwatch);
      },
    },
    usage: {
      GET: async (_req, res, _query, _rest, s) => {
        const report = await s.plane.usage();
        // With a store: whether these are the store's figures or this server's last known ones.
        const reachable = s.plane.storeReachable();
        if (reachable !== undefined) res.setHeader('x-mockapi-store', reachable ? 'reachable' : 'unreachable');
        return report;
      },
    },
    reset: {
      POST: async (req, _res, _query, _rest, s) => {
        const parts = readResetParts(await readJsonBody(req));
        const result = await s.plane.reset(parts);
        await othersOf(s)?.others({ op: 'reset', parts });
        return result;
      },
    },
    'rotate-key': {
      POST: async (req, _res, _query, _rest, s) => {
        // The keys are the config's, shared by every session: a test in one session cannot change them for all.
        if (s.id !== '')
          throw new ControlError(
            409,
            'conflict',
            'the keys are shared by every session: rotate a key without naming a session',
          );
        const { key, name } = readRotateKey(await readJsonBody(req));
        return s.plane.rotateKey(key, name);
      },
    },
    scenarios: { GET: (_req, _res, _query, _rest, s) => s.plane.scenarios() },
    'scenarios/*': {
      PUT: async (req, _res, _query, name, s) => {
        const state = readScenarioState(await readJsonBody(req));
        const result = s.plane.setScenario(name, state);
        await othersOf(s)?.others({ op: 'scenario', name, state });
        return result;
      },
    },
    clock: {
      GET: (_req, _res, _query, _rest, s) => s.plane.clock.now(),
      POST: async (req, _res, _query, _rest, s) => moveClock(s.plane, await readJsonBody(req)),
    },
    endpoints: {
      GET: async (_req, _res, _query, _rest, s) => ({
        endpoints: s.plane.endpoints(await othersOf(s)?.endpointCounts()),
      }),
    },
    clients: {
      GET: async () =>
        workers === undefined ? control.clients() : mergeClients([control.clients(), ...(await workers.clients())]),
    },
    project: { GET: (_req, _res, query, _rest, s) => s.plane.project(query.get('reveal') === 'true') },
    '': { GET: (_req, res) => (sendInspectorPage(res), STREAMING) }, // the inspector
  };
  const routes = mergeRoutes(own, ...tables);

  async function waitRoute(req: IncomingMessage, query: URLSearchParams, s: AdminSession): Promise<unknown> {
    const filter = readFilter(query);
    const abort = new AbortController();
    let dropped: string | undefined;
    const stop = (reason?: string) => {
      dropped = reason;
      abort.abort();
    };
    open.set(stop, s.id);
    const gone = (): void => stop();
    req.socket.once('close', gone);
    try {
      const options = readWaitOptions(query);
      const others = othersOf(s);
      const requests = await (others === undefined
        ? s.plane.waitForRequests(filter, options, abort.signal)
        : others.waitFor(filter, options, abort.signal));
      return { requests };
    } catch (err) {
      if (err instanceof ControlError && err.code === 'aborted') {
        if (dropped !== undefined) throw new ControlError(410, 'session_dropped', dropped);
        throw new ControlError(503, 'stopping', 'the server is stopping');
      }
      throw err;
    } finally {
      open.delete(stop);
      req.socket.removeListener('close', gone);
    }
  }

  function streamEvents(res: ServerResponse, s: AdminSession, unwatch?: () => void): typeof STREAMING {
    const control = s.plane;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    });
    res.write(': mockapi events\n\n');
    // Every write checks the backlog first: what the server holds for this reader stays under the
    // limit plus one event, and a reader that fell behind is told so and let go.
    const write = (text: string): void => {
      if (res.writableLength <= EVENT_BACKLOG_LIMIT) res.write(text);
      else drop();
    };
    const unsubscribe = control.subscribe((event: ControlEvent) =>
      write(`event: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`),
    );
    const heartbeat = setInterval(() => write(': keep-alive\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    let ended = false;
    const end = (last?: string) => {
      if (ended) return;
      ended = true;
      clearInterval(heartbeat);
      unsubscribe();
      unwatch?.();
      open.delete(end);
      if (!res.writableEnded) res.end(last);
    };
    // A session dropped under its stream: the reader is told why, in a comment as the drop is.
    const dropped = (reason?: string): void => end(reason === undefined ? undefined : `: ${reason}\n\n`);
    const drop = (): void => {
      end(DROPPED);
      // A reader that still does not read would hold the backlog for ever: cut it after a grace.
      const cut = setTimeout(() => res.destroy(), DROPPED_GRACE_MS);
      cut.unref();
      res.once('close', () => clearTimeout(cut));
    };
    open.set(dropped, s.id);
    res.once('close', () => end());
    return STREAMING;
  }

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
    if (closing) return answer(res, 503, { error: 'stopping', message: 'the server is stopping' });
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
    if (methods === undefined)
      return answer(res, 404, { error: 'not_found', message: `No admin call ${method} ${path}` });
    const route = methods[method];
    if (route === undefined)
      return answer(
        res,
        405,
        { error: 'method_not_allowed', message: `${path} takes ${Object.keys(methods).join(', ')}` },
        { allow: Object.keys(methods).join(', ') },
      );
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
      if (err instanceof WaitTimeoutError)
        return answer(res, 408, { error: err.code, message: err.message, requests: err.requests });
      if (err instanceof ControlError) return answer(res, err.status, { error: err.code, message: err.message });
      throw err;
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
      closing = true;
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

const STREAMING = Symbol('streaming');

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
