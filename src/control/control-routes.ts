/**
 * The admin API's own routes, over the control plane: the journal (list, count, wait, clear), the
 * event stream, usage, reset, rotate-key, scenarios, the clock, endpoints, clients, the project and
 * the inspector page. Capabilities add theirs (stubs, sessions, webhooks…) beside these.
 */
import type { IncomingMessage } from 'node:http';
import { ControlError } from './control-error.js';
import type { ControlPlane } from './control-plane.js';
import { readFilter, readJsonBody } from './admin-input.js';
import { moveClock, readResetParts, readRotateKey, readScenarioState, readWaitOptions } from './call-input.js';
import { sendInspectorPage } from '../inspector/page-asset.js';
import type { OtherWorkers } from './other-workers.js';
import { mergeClients } from './early-retries.js';
import { STREAMING, type AdminSession, type RouteTable } from './admin-routes.js';
import { streamEvents, type OpenCalls } from './admin-events.js';

/** What the admin API shares with its own routes: the default session's plane, the other workers, the calls held open. */
export interface AdminState {
  readonly control: ControlPlane;
  readonly workers: OtherWorkers | undefined;
  /** What `close` must end (streams and waits), each with the session it belongs to. */
  readonly open: OpenCalls;
  /** Set by `close`: every call from then on is a 503 `stopping`. */
  closing: boolean;
}

/**
 * Another worker's part of the journal is asked only for the default session: a named session's
 * requests are answered by the worker that holds it (see docs/sessions.md, "Sessions and workers").
 * On a fleet, a named session has a link of its own to every host.
 */
function othersOf(admin: AdminState, s: AdminSession): OtherWorkers | undefined {
  return s.id === '' ? admin.workers : s.others;
}

/** The journal's routes: list, clear, count, wait, and the event stream. */
function journalRoutes(admin: AdminState): RouteTable {
  return {
    requests: {
      GET: async (_req, _res, query, _rest, s) => {
        const filter = readFilter(query);
        const others = othersOf(admin, s);
        return { requests: others === undefined ? s.plane.requests(filter) : await others.requests(filter) };
      },
      DELETE: async (_req, _res, _query, _rest, s) => {
        s.plane.clearRequests();
        await othersOf(admin, s)?.others({ op: 'clear' });
        return { requests: [] };
      },
    },
    'requests/count': {
      GET: async (_req, _res, query, _rest, s) => {
        const filter = readFilter(query);
        const others = othersOf(admin, s);
        return { count: others === undefined ? s.plane.countRequests(filter) : await others.count(filter) };
      },
    },
    'requests/wait': { GET: (req, _res, query, _rest, s) => waitRoute(admin, req, query, s) },
    events: {
      GET: async (req, res, _query, _rest, s) => {
        // With workers: once every other worker forwards its requests here, so a client that lists
        // the journal after the stream opened misses none between the two.
        const unwatch = await othersOf(admin, s)?.watch();
        if (admin.closing || req.socket.destroyed) {
          unwatch?.();
          if (admin.closing) throw new ControlError(503, 'stopping', 'the server is stopping');
          return STREAMING; // the client went away meanwhile
        }
        return streamEvents(res, s, admin.open, unwatch);
      },
    },
  };
}

/** The admin API's own routes over `admin`'s control plane (and each call's session's). */
export function controlRoutes(admin: AdminState): RouteTable {
  return {
    ...journalRoutes(admin),
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
        await othersOf(admin, s)?.others({ op: 'reset', parts });
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
        await othersOf(admin, s)?.others({ op: 'scenario', name, state });
        return result;
      },
    },
    clock: {
      GET: (_req, _res, _query, _rest, s) => s.plane.clock.now(),
      POST: async (req, _res, _query, _rest, s) => moveClock(s.plane, await readJsonBody(req)),
    },
    endpoints: {
      GET: async (_req, _res, _query, _rest, s) => ({
        endpoints: s.plane.endpoints(await othersOf(admin, s)?.endpointCounts()),
      }),
    },
    clients: {
      GET: async () =>
        admin.workers === undefined
          ? admin.control.clients()
          : mergeClients([admin.control.clients(), ...(await admin.workers.clients())]),
    },
    project: { GET: (_req, _res, query, _rest, s) => s.plane.project(query.get('reveal') === 'true') },
    '': { GET: (_req, res) => (sendInspectorPage(res), STREAMING) }, // the inspector
  };
}

/** `GET requests/wait`: held in `admin.open` until it answers, its client goes, or `close` ends it. */
async function waitRoute(
  admin: AdminState,
  req: IncomingMessage,
  query: URLSearchParams,
  s: AdminSession,
): Promise<unknown> {
  const filter = readFilter(query);
  const abort = new AbortController();
  let dropped: string | undefined;
  const stop = (reason?: string) => {
    dropped = reason;
    abort.abort();
  };
  admin.open.set(stop, s.id);
  const gone = (): void => stop();
  req.socket.once('close', gone);
  try {
    const options = readWaitOptions(query);
    const others = othersOf(admin, s);
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
    admin.open.delete(stop);
    req.socket.removeListener('close', gone);
  }
}
