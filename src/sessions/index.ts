import type { ConfigRuntime } from '../answer/config-runtime.js';
import type { Clock } from '../clock.js';
import type { RouteTable, SessionLookup } from '../control/admin-api.js';
import type { ClientTracker } from '../control/early-retries.js';
import type { Logger } from '../logger.js';
import { createSessionRegistry, type SessionRegistry } from './registry.js';
import { sessionLookup, sessionRoutes, tooManySessions, type SessionCounts } from './routes.js';
import type { SessionFleet, SessionParts, SharedParts } from './session-parts.js';
import type { SessionBacking } from './registry.js';
import { localSessionCalls, type SessionCalls } from './calls.js';

export type { SessionCreated, SessionInfo, SessionCounts } from './routes.js';
export type { SessionCalls } from './calls.js';
export type { SessionParts, SessionFleet } from './session-parts.js';
export type { SessionBacking, SharedSession } from './registry.js';
export { sessionStep, SESSION_HEADER, SESSION_PREFIX, type SessionStepParts } from './step.js';
export { sessionIdProblem } from './ids.js';
export { BAGGAGE_KEY } from './baggage.js';

/** The named sessions of one server: their registry (the session step reads it), the admin lookup and routes. */
export interface Sessions {
  readonly registry: SessionRegistry;
  /** How an admin call finds the session it names (`?session=`, the header, the path prefix). */
  readonly lookup: SessionLookup;
  /** The parts of the session `id`, made if need be; a 429 `ControlError` when there are `sessions.max` already. */
  partsOf(id: string): SessionParts;
  /** `/__mockapi/sessions` and `/__mockapi/sessions/<id>`. */
  routes(counts: SessionCounts): RouteTable;
  /** The same calls on `startMockServer`'s object; `url` is the server's base URL. */
  calls(counts: SessionCounts, url: string): SessionCalls;
  /** Drops every session. */
  close(): void;
}

export interface SessionsOptions {
  runtime: ConfigRuntime;
  logger: Logger;
  clients: ClientTracker;
  /** The server's clock (real, or injected). */
  clock: Clock;
  /** Where the server's virtual clock started (`--clock`); each session gets its own from there. */
  virtualStart: number | undefined;
  /** Removes a session's run-time stubs (its `reset`). */
  clearStubs(id: string): number;
  /** A session's resources (its `reset`, part `resources`). */
  resources?: SharedParts['resources'];
  /** Told when a session's own virtual clock moved. */
  clockMoved?(id: string): void;
  /** Futile retries of spent budgets (a session's reset of its usage forgets its own). */
  futile?: SharedParts['futile'];
  /** Told of each session dropped: what capabilities keep for it goes (its stubs, its open waits); `shared`: in a shared store too. */
  dropped(id: string, shared: boolean, stopping?: boolean): void;
  /** Whether a session has a wait or an event stream open. */
  busy(id: string): boolean;
  /** Why this server cannot hold named sessions (a worker of `serve --workers`). */
  unavailable?: string;
  /** On a host of a fleet: the sessions are every host's (`backing`), and so are their parts (`fleet`). */
  fleet?: SessionFleet & { backing: SessionBacking };
}

/** Builds the sessions of a server; they follow reloads (the journal's size, scenarios, ttl). */
export function createSessions(options: SessionsOptions): Sessions {
  const { runtime } = options;
  const registry = createSessionRegistry({
    shared: {
      runtime,
      logger: options.logger,
      clients: options.clients,
      clock: options.clock,
      virtualStart: options.virtualStart,
      clearStubs: options.clearStubs,
      resources: options.resources,
      clockMoved: options.clockMoved,
      futile: options.futile,
      ...(options.fleet === undefined ? {} : { fleet: options.fleet }),
    },
    config: () => runtime.holder.current.config,
    dropped: options.dropped,
    busy: options.busy,
    ...(options.unavailable === undefined ? {} : { unavailable: options.unavailable }),
    ...(options.fleet === undefined ? {} : { backing: options.fleet.backing }),
    warn: (message) => options.logger.warn(message),
  });
  runtime.onSwap((prev, next) => registry.follow(prev, next));
  return {
    registry,
    lookup: sessionLookup(registry),
    partsOf(id) {
      const entry = registry.enter(id);
      if (entry === undefined) throw tooManySessions(registry.settings().max);
      return registry.partsOf(entry);
    },
    routes: (counts) => sessionRoutes(registry, counts),
    calls: (counts, url) => localSessionCalls(registry, counts, url),
    close: () => registry.close(),
  };
}
