// The named sessions' part of a server's start: what a session is made of (each with its own journal,
// clock, scenario states, limits and stubs, made on first use), what dropping one lets go of, and
// what a session's stubs are counted on. The stubs and resources are made after the sessions and
// reached through `later` once they are.
import type { FutileWatch } from '../http/steps/limits.js';
import type { Fleet } from '../fleet/index.js';
import type { Resources } from '../resources/index.js';
import type { SessionParts, Sessions, SessionsOptions } from '../sessions/index.js';
import type { StubSession, Stubs } from '../stubs/index.js';
import type { WebhookWaits } from '../webhooks/index.js';
import type { StartContext } from './context.js';
import type { Foundation } from './foundation.js';
import type { ServedParts } from './runtime.js';

/** The parts the sessions' closures reach, made after the sessions (filled in as they are made). */
export interface MadeLater {
  sessions: Sessions;
  stubs: Stubs;
  resources: Resources;
}

/** Besides the foundation and the runtime: what the sessions' closures need of the parts around them. */
export interface SessionNeighbours {
  webhookWaits: WebhookWaits;
  futile: FutileWatch;
  later: MadeLater;
}

export function sessionsOptions(ctx: StartContext, p: Foundation & ServedParts, n: SessionNeighbours): SessionsOptions {
  const { options, logger } = ctx;
  const { control, fleet } = p;
  const { webhookWaits, futile, later } = n;
  return {
    runtime: p.runtime,
    logger,
    clients: p.clients,
    clock: p.clock,
    virtualStart: control.virtualStart,
    clearStubs: (id) => later.stubs.clearSession(id),
    resources: {
      reset: (id, cleared) => later.resources.reset(id, cleared),
      forget: (id) => later.resources.forget(id),
      active: () => later.resources.engine.collections.length > 0,
    },
    clockMoved: (id) =>
      void later.resources.clockMovedIn(id).catch((err: Error) => logger.warn(`resources: ${err.message}`)),
    futile,
    dropped(id, shared, stopping) {
      later.stubs.dropSession(id);
      futile.forget(id);
      fleet?.closeSession(id, stopping !== true); // a session dropped: what its journal still holds here is of no use
      // Words that name the session are shown (a log line, a 410): a session named as a key is `<redacted>` there.
      const shown = later.sessions.registry.shown;
      // On a fleet, the host that drops a session clears what the store keeps of it; the others let go.
      if (shared)
        void later.resources
          .drop(id)
          .catch((err: Error) => logger.warn(shown(`resources of the session ${id}: ${err.message}`)));
      else later.resources.forget(id);
      control.admin.closeSession(id, shown(`the session ${id} was dropped`));
      webhookWaits.closeSession(id, shown(`the session ${id} was dropped`));
    },
    busy: (id) => control.admin.opened(id) + webhookWaits.opened(id) > 0,
    ...sessionsUnavailable(options.ownPort === true && fleet === undefined),
    ...(fleet === undefined ? {} : { fleet: fleetSessions(ctx, fleet, later) }),
  };
}

/** On a host of a fleet: the sessions are every host's, and so are their parts. */
function fleetSessions(ctx: StartContext, fleet: Fleet, later: MadeLater): NonNullable<SessionsOptions['fleet']> {
  const { config } = ctx;
  return {
    backing: fleet.sessions,
    share: (id: string) => fleet.session(id),
    prepare: (id: string) => later.stubs.openSession(id),
    store: { url: fleet.url, project: config.project, storeDown: config.limits.storeDown },
  };
}

/**
 * Why this server refuses named sessions, if it does: each worker of `serve --workers` would hold a
 * session of its own (its stubs, journal, clock), seeing part of its requests — unless the workers
 * are hosts of a fleet, which shares them through Redis (src/fleet/).
 */
function sessionsUnavailable(worker: boolean): { unavailable?: string } {
  if (worker)
    return {
      unavailable:
        'named sessions need a single process: serve without --workers (the default session works as before)',
    };
  return {};
}

/** What a named session's stubs are counted on: its own limits, clock and usage report. */
export function stubSession(parts: SessionParts): StubSession {
  return {
    answers: parts.answers,
    limits: parts.limits,
    usage: parts.usage,
    keyLimits: parts.keyLimits,
    clock: parts.clock,
    report: () => parts.plane.usage(),
  };
}
