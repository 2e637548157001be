// The admin phase of a server's start: the control plane's admin API, over every capability's
// admin routes, and the calls of startMockServer's object (the same functions).
import type { ControlCalls } from '../control/calls.js';
import { tlsRoutes } from '../tls/routes.js';
import { webhookRoutes } from '../webhooks/index.js';
import type { StartContext } from './context.js';
import type { ServerParts } from './parts.js';

export interface AdminParts {
  calls: ControlCalls;
  /** Aborted by `close`: a wait of the object's calls still pending then ends, as one over HTTP does. */
  stopping: AbortController;
}

export function startAdmin(ctx: StartContext, p: ServerParts): AdminParts {
  const { options, logger } = ctx;
  const { limits, futile, stubs, resources, sessions } = p;
  // Aborted by `close`: a wait of the object's calls still pending then ends, as one over HTTP does.
  const stopping = new AbortController();
  const calls = p.control.start({
    runtime: p.runtime,
    limits: limits.gate,
    usage: limits.usage,
    keyLimits: p.keyLimits,
    logger,
    answers: p.answers,
    clients: p.clients,
    futile: { forget: () => futile.forget('') },
    stubs: stubs.store,
    resources: {
      reset: (cleared) => resources.reset('', cleared),
      forget: () => resources.forget(),
      active: () => resources.engine.collections.length > 0,
    },
    routes: (plane) => [
      ...stubs.routes(plane),
      sessions.routes(p.sessionCounts),
      tlsRoutes(p.tls?.ca),
      webhookRoutes(p.webhooks, plane, (id) => p.sessionPart(id), p.webhookWaits),
      resources.routes(),
      ...(options.recording === undefined ? [] : [options.recording.routes]),
    ],
    sessions: sessions.lookup,
    stopping: stopping.signal,
  });
  return { calls, stopping };
}
