import type { IncomingMessage, ServerResponse } from 'node:http';
import { JSON_CONTENT_TYPE } from '../answer/responses.js';
import { createAdminGuard, type AdminGuardOptions } from './admin-guard.js';
import { ControlError, WaitTimeoutError } from './control-error.js';
import type { ControlPlane, ControlEvent } from './control-plane.js';
import { readFilter, readJsonBody } from './admin-input.js';
import { sendInspectorPage } from '../inspector/page-asset.js';
import type { OtherWorkers } from './other-workers.js';
import { mergeClients } from './early-retries.js';
import { endAfterBody } from '../http/http-limits.js';
import { hasBody } from '../http/request-body.js';

/** The admin API: handles every path under `/__mockapi/` but health; `close` ends open streams and waits. */
export interface AdminApi {
  handle(req: IncomingMessage, res: ServerResponse, path: string): void;
  /** Ends every event stream and pending wait, so a graceful stop does not wait for them. */
  close(): void;
}

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
 * status, or throws a {@link ControlError}. `rest` is what a `name/*` route's `*` stands for.
 */
export type Route = (req: IncomingMessage, res: ServerResponse, query: URLSearchParams, rest: string) => Promise<unknown> | unknown;

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
  const merged: RouteTable = {};
  for (const table of tables) for (const [path, methods] of Object.entries(table)) merged[path] = { ...merged[path], ...methods };
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
export function createAdminApi(control: ControlPlane, guardOptions: AdminGuardOptions, workers?: OtherWorkers, tables: RouteTable[] = []): AdminApi {
  const guard = createAdminGuard(guardOptions);
  const open = new Set<() => void>(); // what `close` must end: streams and waits
  let closing = false;

  const own: RouteTable = {
    requests: {
      GET: async (_req, _res, query) => {
        const filter = readFilter(query);
        return { requests: workers === undefined ? control.requests(filter) : await workers.requests(filter) };
      },
      DELETE: async () => {
        control.clearRequests();
        await workers?.others({ op: 'clear' });
        return { requests: [] };
      },
    },
    'requests/count': {
      GET: async (_req, _res, query) => {
        const filter = readFilter(query);
        return { count: workers === undefined ? control.countRequests(filter) : await workers.count(filter) };
      },
    },
    'requests/wait': { GET: (req, _res, query) => waitRoute(req, query) },
    events: {
      GET: async (req, res) => {
        // With workers: once every other worker forwards its requests here, so a client that lists
        // the journal after the stream opened misses none between the two.
        const unwatch = await workers?.watch();
        if (closing || req.socket.destroyed) {
          unwatch?.();
          if (closing) throw new ControlError(503, 'stopping', 'the server is stopping');
          return STREAMING; // the client went away meanwhile
        }
        return streamEvents(res, unwatch);
      },
    },
    usage: {
      GET: async (_req, res) => {
        const report = await control.usage();
        // With a store: whether these are the store's figures or this server's last known ones.
        const reachable = control.storeReachable();
        if (reachable !== undefined) res.setHeader('x-mockapi-store', reachable ? 'reachable' : 'unreachable');
        return report;
      },
    },
    reset: {
      POST: async (req) => {
        const parts = booleans(await readJsonBody(req), ['journal', 'usage', 'rateLimit', 'sequences', 'scenarios', 'clock', 'stubs', 'resources']);
        const result = await control.reset(parts);
        await workers?.others({ op: 'reset', parts });
        return result;
      },
    },
    'rotate-key': {
      POST: async (req) => {
        const body = await readJsonBody(req);
        if (body.key !== undefined && typeof body.key !== 'string') throw new ControlError(400, 'bad_request', 'key must be a string');
        if (body.name !== undefined && typeof body.name !== 'string') throw new ControlError(400, 'bad_request', 'name must be the name of a key');
        return control.rotateKey(body.key as string | undefined, body.name as string | undefined);
      },
    },
    scenarios: { GET: () => control.scenarios() },
    'scenarios/*': {
      PUT: async (req, _res, _query, name) => {
        const body = await readJsonBody(req);
        if (typeof body.state !== 'string') throw new ControlError(400, 'bad_request', 'the body must be {"state": "<state>"}');
        const result = control.setScenario(name, body.state);
        await workers?.others({ op: 'scenario', name, state: body.state });
        return result;
      },
    },
    clock: {
      GET: () => control.clock.now(),
      POST: async (req) => {
        const body = await readJsonBody(req);
        if ((body.set === undefined) === (body.advance === undefined)) throw new ControlError(400, 'bad_request', 'the body must be {"set": "<ISO time>"} or {"advance": "<duration>"}');
        return body.set !== undefined ? control.clock.set(body.set as string) : control.clock.advance(body.advance as string);
      },
    },
    endpoints: {
      GET: async () => ({ endpoints: control.endpoints(await workers?.endpointCounts()) }),
    },
    clients: { GET: async () => (workers === undefined ? control.clients() : mergeClients([control.clients(), ...(await workers.clients())])) },
    project: { GET: (_req, _res, query) => control.project(query.get('reveal') === 'true') },
    '': { GET: (_req, res) => (sendInspectorPage(res), STREAMING) }, // the inspector
  };
  const routes = mergeRoutes(own, ...tables);

  async function waitRoute(req: IncomingMessage, query: URLSearchParams): Promise<unknown> {
    const filter = readFilter(query);
    const count = query.get('count');
    const abort = new AbortController();
    const stop = () => abort.abort();
    open.add(stop);
    req.socket.once('close', stop);
    try {
      const options = { count: count === null ? undefined : readCount(count), timeout: query.get('timeout') ?? undefined };
      const requests = await (workers === undefined ? control.waitForRequests(filter, options, abort.signal) : workers.waitFor(filter, options, abort.signal));
      return { requests };
    } catch (err) {
      if (err instanceof ControlError && err.code === 'aborted') throw new ControlError(503, 'stopping', 'the server is stopping');
      throw err;
    } finally {
      open.delete(stop);
      req.socket.removeListener('close', stop);
    }
  }

  function streamEvents(res: ServerResponse, unwatch?: () => void): typeof STREAMING {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
    res.write(': mockapi events\n\n');
    // Every write checks the backlog first: what the server holds for this reader stays under the
    // limit plus one event, and a reader that fell behind is told so and let go.
    const write = (text: string): void => {
      if (res.writableLength <= EVENT_BACKLOG_LIMIT) res.write(text);
      else drop();
    };
    const unsubscribe = control.subscribe((event: ControlEvent) => write(`event: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`));
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
    const drop = (): void => {
      end(DROPPED);
      // A reader that still does not read would hold the backlog for ever: cut it after a grace.
      const cut = setTimeout(() => res.destroy(), DROPPED_GRACE_MS);
      cut.unref();
      res.once('close', () => clearTimeout(cut));
    };
    open.add(end);
    res.once('close', () => end());
    return STREAMING;
  }

  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const refusal = guard(req);
    if (refusal !== undefined) return answer(res, refusal.status, { error: refusal.code, message: refusal.message });
    if (closing) return answer(res, 503, { error: 'stopping', message: 'the server is stopping' });
    const relative = path.slice(PREFIX.length).replace(/\/+$/, '');
    const slash = relative.indexOf('/');
    // `scenarios/<name>`, `stubs/<id>`: the route `name/*`, with the rest of the path as its argument.
    const isNamed = slash > 0 && relative.length > slash + 1 && routes[relative] === undefined && routes[`${relative.slice(0, slash)}/*`] !== undefined;
    const methods = routes[isNamed ? `${relative.slice(0, slash)}/*` : relative];
    const method = req.method ?? 'GET';
    if (methods === undefined) return answer(res, 404, { error: 'not_found', message: `No admin call ${method} ${path}` });
    const route = methods[method];
    if (route === undefined) return answer(res, 405, { error: 'method_not_allowed', message: `${path} takes ${Object.keys(methods).join(', ')}` }, { allow: Object.keys(methods).join(', ') });
    const url = req.url ?? '/';
    const query = new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');
    try {
      const result = await route(req, res, query, isNamed ? decodeRest(relative.slice(slash + 1)) : '');
      if (result instanceof AdminAnswer) answer(res, result.status, result.body);
      else if (result !== STREAMING) answer(res, 200, result);
    } catch (err) {
      if (err instanceof WaitTimeoutError) return answer(res, 408, { error: err.code, message: err.message, requests: err.requests });
      if (err instanceof ControlError) return answer(res, err.status, { error: err.code, message: err.message });
      throw err;
    }
  }

  return {
    handle(req, res, path) {
      handle(req, res, path).catch((err: unknown) => {
        if (!res.headersSent) answer(res, 500, { error: 'internal_error', message: (err as Error).message });
        else res.destroy();
      });
    },
    close() {
      closing = true;
      for (const end of [...open]) end();
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
  res.writeHead(status, { 'content-type': JSON_CONTENT_TYPE, 'content-length': String(bytes.length), 'cache-control': 'no-store', ...headers });
  // A refusal given before the body was read (403, 415…) ends once the client stopped sending.
  if (hasBody(res.req) && !res.req.complete) endAfterBody(res.req, res, bytes);
  else res.end(bytes);
}

function readCount(text: string): number {
  if (!/^\d+$/.test(text)) throw new ControlError(400, 'bad_request', `count must be a whole number, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** Picks the boolean fields of `body` named in `names`; anything else there is a 400. */
function booleans(body: Record<string, unknown>, names: string[]): Record<string, boolean> {
  const picked: Record<string, boolean> = {};
  for (const [name, value] of Object.entries(body)) {
    if (!names.includes(name)) throw new ControlError(400, 'bad_request', `unknown field "${name}"; reset takes ${names.join(', ')}`);
    if (typeof value !== 'boolean') throw new ControlError(400, 'bad_request', `${name} must be true or false`);
    picked[name] = value;
  }
  return picked;
}
