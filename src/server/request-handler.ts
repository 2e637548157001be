// The request handler phase of a server's start: the reply, the upstream step, the default session's
// scope and the parts the request steps are built from (src/request-steps.ts), then the handler that
// every port serves.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRetryAfterWatch } from '../control/retry-after-watch.js';
import { createRequestHandler } from '../http/handler.js';
import { createReply, type Reply } from '../http/reply.js';
import { DEFAULT_SCOPE_ID, type RequestScope } from '../http/scope.js';
import { withMonthStatus } from '../pipeline/limit-headers.js';
import { createResilienceSource } from '../pipeline/resilience.js';
import { requestSteps, type StepParts } from '../request-steps.js';
import { streamAnswers } from '../stream/answer.js';
import { createUpstreamStep, type UpstreamStep } from '../upstream/step.js';
import { SLOT_ENV } from '../workers/ids.js';
import type { StartContext } from './context.js';
import type { ServerParts } from './parts.js';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export function startRequestHandler(ctx: StartContext, p: ServerParts): RequestHandler {
  const { options, logger } = ctx;
  const { runtime, control, clock } = p;
  // The upstream step: undici is loaded only when a request first goes upstream (a reload may add `upstream:`).
  const upstream = createUpstreamStep({
    holder: runtime.holder,
    url: options.upstream,
    recording: options.recording?.sink,
  });
  ctx.stops.push(() => upstream.close());
  const reply = createReply({ requestLog: p.requestLog, logger, retryAfters: createRetryAfterWatch(p.clients, clock) });
  const scope = defaultScope(p);
  const parts = stepParts(ctx, p, reply, upstream);
  parts.streams = streamAnswers(parts);
  // `server.headers` draw from the seed, apart per worker of `serve --workers` (each counts its own requests).
  const serverHeaders = {
    seed: () => runtime.failures.seed,
    states: () => p.answers.states,
    now: clock,
    key: `server.headers\u0000worker\u0000${process.env[SLOT_ENV] ?? ''}`,
  };
  const handler = createRequestHandler({
    holder: runtime.holder,
    reply,
    requestLog: p.requestLog,
    journal: control.journal,
    admin: control.admin.handle,
    steps: requestSteps(parts),
    scope,
    serverHeaders,
  });
  options.onHandler?.(handler);
  return handler;
}

/** The default session: the server's own parts, as before there were sessions. */
function defaultScope(p: ServerParts): RequestScope {
  const { limits } = p;
  return {
    id: DEFAULT_SCOPE_ID,
    journal: p.control.journal,
    clock: p.clock,
    answers: p.answers,
    limits: withMonthStatus(limits.gate, (now) => limits.usage.count(now)),
    keyLimits: p.keyLimits,
    key: undefined,
  };
}

/** What the request steps are built from. */
function stepParts(ctx: StartContext, p: ServerParts, reply: Reply, upstream: UpstreamStep): StepParts {
  const { runtime, stubs, resources, hub, fleet } = p;
  return {
    reply,
    sessions: p.sessions.registry,
    stubs: stubs.store,
    sessionStubs: (id) => stubs.sessionStore(id),
    upstream,
    violations: p.violations,
    get failures() {
      return runtime.failures; // a reload that changes the seed swaps it
    },
    futile: p.futile,
    logger: ctx.logger,
    // `serve --workers` without a fleet: an answer's setState is every worker's before it is sent (a fleet shares them itself).
    ...(hub === undefined || fleet !== undefined
      ? {}
      : { shareStates: (moves: ReadonlyArray<readonly [string, string]>) => hub.others({ op: 'states', moves }) }),
    // One source of fault and latency-shape draws for the answer step and its streams, kept across reloads.
    resilience: createResilienceSource(),
    webhooks: p.webhooks,
    resources,
    resourceView: (x) => resources.view(x.scope.id),
  };
}
