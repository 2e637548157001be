// The fourth phase of a server's start: the capabilities that keep things at run time — named
// sessions, run-time stubs, webhooks and resources. Sessions, stubs and resources reach each other
// through closures: the sessions' reach the stubs and resources through `later` (src/server/sessions.ts).
import type { FutileWatch } from '../http/steps/limits.js';
import { createFutileWatch } from '../control/futile-retries.js';
import { createResources, type Resources } from '../resources/index.js';
import { createSessions, type SessionCounts, type SessionParts, type Sessions } from '../sessions/index.js';
import { createStubs, type Stubs } from '../stubs/index.js';
import {
  createWebhookService,
  createWebhookWaits,
  stopWebhooks,
  type WebhookService,
  type WebhookWaits,
} from '../webhooks/index.js';
import type { StartContext } from './context.js';
import type { Foundation } from './foundation.js';
import type { LimitParts } from './limits.js';
import type { ServedParts } from './runtime.js';
import { sessionsOptions, stubSession, type MadeLater } from './sessions.js';

export interface CapabilityParts {
  sessions: Sessions;
  stubs: Stubs;
  webhooks: WebhookService;
  resources: Resources;
  /** The webhook delivery waits open per session (a session with one is in use; dropped, they end). */
  webhookWaits: WebhookWaits;
  futile: FutileWatch;
  /** What a session's line of `GET /__mockapi/sessions` counts besides its requests. */
  sessionCounts: SessionCounts;
  /** The parts of a named session, if it is open. */
  sessionPart: (scope: string) => SessionParts | undefined;
}

type Before = Foundation & ServedParts & LimitParts;

export async function startCapabilities(ctx: StartContext, p: Before): Promise<CapabilityParts> {
  const { stops } = ctx;
  const { control } = p;
  // Named sessions: each with its own journal, clock, scenario states, limits and stubs, made on first use.
  // The webhook delivery waits open per session (a session with one is in use; dropped, they end).
  const webhookWaits = createWebhookWaits();
  // Futile retries of spent budgets (meters), noted in the journal; per session, forgotten with it.
  const futile = createFutileWatch();
  // The sessions' closures reach the sessions themselves, the stubs and the resources through `later`: filled in as each is made.
  const later = {} as MadeLater;
  const sessions = (later.sessions = createSessions(sessionsOptions(ctx, p, { webhookWaits, futile, later })));
  stops.push(() => sessions.close());
  const stubs = (later.stubs = await startStubs(ctx, p, sessions));
  // What a session's line of `GET /__mockapi/sessions` counts besides its requests.
  const sessionCounts = {
    stubs: (id: string) => stubs.sessionStore(id)?.size ?? 0,
    open: (id: string) => control.admin.opened(id) + webhookWaits.opened(id),
  };
  const webhooks = startWebhooks(ctx, p);
  // A named session's objects are made and moved on its own clock, and read its scenario states.
  const sessionPart = (scope: string) => sessions.registry.get(scope)?.parts;
  const resources = (later.resources = await startResources(ctx, p, webhooks, sessionPart));
  return { sessions, stubs, webhooks, resources, webhookWaits, futile, sessionCounts, sessionPart };
}

/** Run-time stubs: matched before the config's endpoints, kept by reloads, removed by reset. */
async function startStubs(ctx: StartContext, p: Before, sessions: Sessions): Promise<Stubs> {
  const { options, logger } = ctx;
  const { fleet, limits } = p;
  const stubs = await createStubs({
    runtime: p.runtime,
    answers: p.answers,
    logger,
    limits: limits.gate,
    usage: limits.usage,
    keyLimits: p.keyLimits,
    clock: p.clock,
    worker: options.ownPort === true,
    session: (id) => stubSession(sessions.partsOf(id)),
    ...(options.linkedFolder === undefined ? {} : { linkedFolders: [options.linkedFolder] }),
    ...(fleet === undefined
      ? {}
      : { share: fleet.stubShare, sessionShare: (id: string) => fleet.session(id).stubShare }),
  });
  ctx.stops.push(() => stubs.close()); // after the answers: a request waiting for one of a stub's `times` gets it
  return stubs;
}

/**
 * Webhooks: sent off the request path, on the server's clock; a clock move fires the retries due.
 * On a host of a fleet, the webhooks' seed is the host's own: two hosts with one `seed` would give their events the same ids.
 */
function startWebhooks(ctx: StartContext, p: Before): WebhookService {
  const { runtime, fleet } = p;
  const webhooks = createWebhookService({
    holder: runtime.holder,
    clock: p.clock,
    seed: () =>
      fleet === undefined ? runtime.failures.seed : (runtime.failures.seed + fleet.salt) % Number.MAX_SAFE_INTEGER,
  });
  ctx.stops.push(() => stopWebhooks(webhooks, ctx.options.drainWebhooks ?? 0, ctx.logger));
  p.control.onClockMove(() => webhooks.clockMoved());
  return webhooks;
}

/**
 * Resources: objects that remember, kept by reloads, moved on the server's clock, put back to their
 * seed by reset. With a shared store (limits.store, --store) they are in Redis, for every worker and host;
 * with `--workers` and no store, in the primary's memory.
 */
async function startResources(
  ctx: StartContext,
  p: Before,
  webhooks: WebhookService,
  sessionPart: CapabilityParts['sessionPart'],
): Promise<Resources> {
  const { config, logger, stops } = ctx;
  const { runtime, answers, clock } = p;
  const resourceStoreUrl = (config.resources?.collections.length ?? 0) > 0 ? p.storeUrl : undefined;
  // A `serve --workers` worker without a store: the objects are the primary's, asked for over IPC
  // (workers/resource-link.ts), also when a reload brings the first collections; nothing is asked
  // on a request's path while none are configured.
  const resourceStore =
    resourceStoreUrl !== undefined
      ? await (await import('../resources/redis-store.js')).openResourceStore(resourceStoreUrl, config.project)
      : p.hub !== undefined && p.storeUrl === undefined
        ? (await import('../workers/resource-link.js')).linkedResourceStore()
        : undefined;
  if (resourceStore !== undefined) stops.push(() => resourceStore.close());
  const resources = await createResources({
    holder: runtime.holder,
    clock,
    seed: () => runtime.failures.seed,
    logger,
    webhooks,
    states: (scope) => (scope === '' ? answers.states : (sessionPart(scope)?.answers.states ?? {})),
    clockOf: (scope) => sessionPart(scope)?.clock ?? clock,
    ...(resourceStore === undefined ? {} : { store: resourceStore }),
  });
  stops.push(() => resources.close()); // after the answers: `.mockapi/resources.json` holds what they did
  runtime.onSwap(
    (_prev, next) => void resources.follow(next).catch((err: Error) => logger.warn(`resources: ${err.message}`)),
  );
  p.control.onClockMove(() => resources.clockMoved());
  return resources;
}
