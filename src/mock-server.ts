import { resolve } from 'node:path';
import { compileConfig } from './answer/compile.js';
import { ANSWER_PARTS } from './answer-parts.js';
import { createAnswerState } from './answer/answer-state.js';
import { createConfigRuntime, type ReloadResult } from './answer/config-runtime.js';
import { loadConfig, configFromObject, formatIssue } from './config/load.js';
import type { Config, ConfigIssue, LoadResult } from './config/types.js';
import { systemClock } from './clock.js';
import { alikeLines, silentLogger, type Logger } from './logger.js';
import { createLimitGate } from './pipeline/limits.js';
import { createKeyLimits } from './pipeline/key-limits.js';
import { withMonthStatus } from './pipeline/limit-headers.js';
import { createRequestLogger } from './http/request-log.js';
import { createRequestHandler } from './http/handler.js';
import { createReply } from './http/reply.js';
import { createRetryAfterWatch } from './control/retry-after-watch.js';
import { createResilienceSource } from './pipeline/resilience.js';
import { requestSteps, type StepParts } from './request-steps.js';
import { createFutileWatch } from './control/futile-retries.js';
import { streamAnswers } from './stream/answer.js';
import { createViolationTally, type ViolationTally } from './validate/tally.js';
import { createClientTracker, type ClientTracker } from './control/early-retries.js';
import type { WorkerHub } from './workers/hub.js';
import { storeNeed } from './workers/needs-store.js';
import { SLOT_ENV } from './workers/ids.js';
import { startHttpFront, type HttpFront } from './http/http-front.js';
import type { OwnPort } from './http/own-port.js';
import { createStopStack, type StopStack } from './stop-stack.js';
import { ListenError } from './http/listen.js';
import { registerServer, type Unregister } from './state/registry.js';
import { keepTickObjectShape } from './tick-shape.js';
import { createControl } from './control/control.js';
import { refusedWhenClosed } from './control/after-close.js';
import { createStubs, type StubSession } from './stubs/index.js';
import { createSessions, type SessionParts } from './sessions/index.js';
import { DEFAULT_SCOPE_ID, type RequestScope } from './http/scope.js';
import {
  createWebhookService,
  createWebhookWaits,
  stopWebhooks,
  webhookCalls,
  webhookRoutes,
} from './webhooks/index.js';
import { createResources } from './resources/index.js';
import { createUpstreamStep } from './upstream/step.js';
import { httpsSettings, type HttpsOption } from './tls/settings.js';
import { tlsRoutes } from './tls/routes.js';
import { TlsSetupError } from './tls/tls-error.js';
import type { Fleet } from './fleet/index.js';

export { ListenError, TlsSetupError };
export type { HttpsOption };
export type { ReloadResult };

export const DEFAULT_PORT = 4010;
export const DEFAULT_CONFIG_FILE = 'mockapi.yaml';

import type { MockServer, MockServerOptions } from './mock-server-types.js';

export type { MockServer, MockServerOptions };

/** Thrown by {@link startMockServer} for an invalid config; `issues` lists every problem. */
export class ConfigError extends Error {
  constructor(readonly issues: ConfigIssue[]) {
    super(issues.map(formatIssue).join('\n'));
    this.name = 'ConfigError';
  }
}

async function load(source: MockServerOptions['config']): Promise<LoadResult> {
  if (source !== undefined && typeof source === 'object') return configFromObject(source, process.cwd());
  // The OpenAPI description is read by the first request that needs it; here only its file is looked at.
  return loadConfig(resolve(source ?? DEFAULT_CONFIG_FILE), 'later');
}

/**
 * Starts a mock server, for test suites (vitest or jest global setup) and for `mockapi serve`.
 * Rejects with {@link ConfigError} for an invalid config and {@link ListenError} when it cannot listen.
 *
 * The composition root: it builds the parts and starts them in order — control plane (clock,
 * journal; its admin API once the limits exist), config runtime (what is served, and reload),
 * request log, limits and usage store, stubs, webhooks, the request steps (src/request-steps.ts),
 * HTTP front (listening, requests held at its gate), file watches, registry entry — then opens the
 * gate. From the first answer on, the server is registered and watching, so a rotation reaches it.
 * Each part pushes its stop as it starts: a failed start and `close` stop them in reverse order.
 */
export async function startMockServer(options: MockServerOptions = {}): Promise<MockServer> {
  keepTickObjectShape();
  const logger = options.logger ?? silentLogger;
  const loaded = await load(options.config);
  if (!loaded.ok) throw new ConfigError(loaded.issues);
  const stops = createStopStack();
  try {
    return await startParts(options, loaded.config, logger, stops);
  } catch (err) {
    // Nothing was answered: let go of the ports, of what waits at the gate and of the state files.
    await stops
      .unwind()
      .catch((stopErr: unknown) => logger.warn(`while stopping after a failed start: ${(stopErr as Error).message}`));
    throw err;
  }
}

async function startParts(
  options: MockServerOptions,
  config: Config,
  logger: Logger,
  stops: StopStack,
): Promise<MockServer> {
  const file = config.file;
  const host = options.host ?? config.server.host;
  let opened = false;
  /** The config served now: the first until the runtime holds it. */
  let served = (): Config => config;
  // A `serve --workers` worker: its journal stays here; the admin API asks the other workers when called (workers/hub.ts).
  const hub = options.ownPort ? (await import('./workers/hub.js')).joinHub() : undefined;
  if (hub !== undefined) stops.push(() => hub.close());
  // A host of a fleet (fleet.store, --fleet): its parts share what they keep through Redis (src/fleet/). Loaded only then.
  // (the config served at the time: a reload may name other keys)
  const fleet = await openFleet(options, config, logger, hub, () => keyNames(served()));
  if (fleet !== undefined) stops.push(() => fleet.close()); // last: what the journal still holds is written
  const storeUrl = options.store ?? config.limits.store ?? fleet?.url;
  // HTTPS: the certificate before anything else starts, so a wrong one stops the start cleanly. Loaded only when on.
  const https = httpsSettings(options.https, config.server.https);
  if (fleet !== undefined && https !== undefined && https.cert === undefined && https.key === undefined)
    await fleet.shareCa(config.dir);
  const tls =
    https === undefined
      ? undefined
      : await (await import('./tls/setup.js')).prepareHttps(https, { configDir: config.dir, bindHost: host });
  // Retry-After given per client, summed up on stderr when the server stops, as is validation.
  // With `serve --workers`, kept per worker and merged when asked (workers/hub.ts).
  const clients = hub === undefined ? createClientTracker() : hub.shareClients(createClientTracker());
  const violations = createViolationTally();
  stops.push(() => (opened ? summarize(clients, violations, hub, logger) : undefined));
  const control = createControl({
    clock: options.clock ?? systemClock,
    journal: config.server.journal,
    bindHost: host,
    adminToken: options.adminToken,
    hub,
    ...(fleet === undefined ? {} : { fleet: fleet.link }),
  });
  const { clock } = control;

  const runtime = createConfigRuntime({
    initial: await compileConfig(config, undefined, { description: 'later', parts: ANSWER_PARTS }),
    parts: ANSWER_PARTS,
    seed: options.seed,
    logger,
    // A `serve --workers` worker without a store: a reload that adds limits or resources is refused as start-up refuses them.
    ...(hub === undefined || storeUrl !== undefined ? {} : { refuse: reloadNeedsStore }),
  });
  served = () => runtime.holder.current.config;
  const requestLog = createRequestLogger({
    format: options.log ?? 'off',
    stream: options.logStream ?? process.stdout,
    color: options.color ?? false,
    // A stop takes 2 s at most besides endpoint delays; a stuck output costs log lines, not more time.
    closeTimeoutMs: 500,
    redactor: () => runtime.holder.current.redactor,
  });
  stops.push(() => requestLog.close());
  // Sequence positions, request counters and scenario states: outside the compiled config, so reloads keep them.
  const answers = fleet === undefined ? createAnswerState(config) : fleet.scenarios(createAnswerState(config));
  runtime.onSwap((_prev, next) => answers.adopt(next));
  // Where counts are kept: the same for the default key's limits and for each key of `keys:`.
  const limitPlace = {
    state: options.state ?? false,
    clock,
    logger,
    store: storeUrl,
    storeDown: config.limits.storeDown,
    project: config.project,
  };
  const limits = await createLimitGate(limitPlace);
  stops.push(() => limits.close()); // writes what was counted
  // The keys of `keys:`, each limited on its own, and the endpoints' own windows (src/pipeline/key-limits.ts).
  const keyLimits = createKeyLimits(limitPlace);
  stops.push(() => keyLimits.close());
  await keyLimits.prepare(keyNames(config));
  runtime.onSwap(
    (_prev, next) =>
      void keyLimits
        .prepare(keyNames(next))
        .catch((err: Error) => logger.warn(`could not open the usage of a key: ${err.message}`)),
  );
  // Named sessions: each with its own journal, clock, scenario states, limits and stubs, made on first use.
  // The webhook delivery waits open per session (a session with one is in use; dropped, they end).
  const webhookWaits = createWebhookWaits();
  // Futile retries of spent budgets (meters), noted in the journal; per session, forgotten with it.
  const futile = createFutileWatch();
  const sessions = createSessions({
    runtime,
    logger,
    clients,
    clock,
    virtualStart: control.virtualStart,
    clearStubs: (id) => stubs.clearSession(id),
    resources: {
      reset: (id, cleared) => resources.reset(id, cleared),
      forget: (id) => resources.forget(id),
      active: () => resources.engine.collections.length > 0,
    },
    clockMoved: (id) => void resources.clockMovedIn(id).catch((err: Error) => logger.warn(`resources: ${err.message}`)),
    futile,
    dropped(id, shared, stopping) {
      stubs.dropSession(id);
      futile.forget(id);
      fleet?.closeSession(id, stopping !== true); // a session dropped: what its journal still holds here is of no use
      // Words that name the session are shown (a log line, a 410): a session named as a key is `<redacted>` there.
      const shown = sessions.registry.shown;
      // On a fleet, the host that drops a session clears what the store keeps of it; the others let go.
      if (shared)
        void resources
          .drop(id)
          .catch((err: Error) => logger.warn(shown(`resources of the session ${id}: ${err.message}`)));
      else resources.forget(id);
      control.admin.closeSession(id, shown(`the session ${id} was dropped`));
      webhookWaits.closeSession(id, shown(`the session ${id} was dropped`));
    },
    busy: (id) => control.admin.opened(id) + webhookWaits.opened(id) > 0,
    ...sessionsUnavailable(options.ownPort === true && fleet === undefined),
    ...(fleet === undefined
      ? {}
      : {
          fleet: {
            backing: fleet.sessions,
            share: (id: string) => fleet.session(id),
            prepare: (id: string) => stubs.openSession(id),
            store: { url: fleet.url, project: config.project, storeDown: config.limits.storeDown },
          },
        }),
  });
  stops.push(() => sessions.close());
  // What a session's line of `GET /__mockapi/sessions` counts besides its requests.
  const sessionCounts = {
    stubs: (id: string) => stubs.sessionStore(id)?.size ?? 0,
    open: (id: string) => control.admin.opened(id) + webhookWaits.opened(id),
  };
  // Run-time stubs: matched before the config's endpoints, kept by reloads, removed by reset.
  const stubs = await createStubs({
    runtime,
    answers,
    logger,
    limits: limits.gate,
    usage: limits.usage,
    keyLimits,
    clock,
    worker: options.ownPort === true,
    session: (id) => stubSession(sessions.partsOf(id)),
    ...(options.linkedFolder === undefined ? {} : { linkedFolders: [options.linkedFolder] }),
    ...(fleet === undefined
      ? {}
      : { share: fleet.stubShare, sessionShare: (id: string) => fleet.session(id).stubShare }),
  });
  stops.push(() => stubs.close()); // after the answers: a request waiting for one of a stub's `times` gets it
  // Webhooks: sent off the request path, on the server's clock; a clock move fires the retries due.
  // On a host of a fleet, the webhooks' seed is the host's own: two hosts with one `seed` would give their events the same ids.
  const webhooks = createWebhookService({
    holder: runtime.holder,
    clock,
    seed: () =>
      fleet === undefined ? runtime.failures.seed : (runtime.failures.seed + fleet.salt) % Number.MAX_SAFE_INTEGER,
  });
  stops.push(() => stopWebhooks(webhooks, options.drainWebhooks ?? 0, logger));
  control.onClockMove(() => webhooks.clockMoved());
  // Resources: objects that remember, kept by reloads, moved on the server's clock, put back to their
  // seed by reset. With a shared store (limits.store, --store) they are in Redis, for every worker and host.
  const resourceStoreUrl = (config.resources?.collections.length ?? 0) > 0 ? storeUrl : undefined;
  const resourceStore =
    resourceStoreUrl === undefined
      ? undefined
      : await (await import('./resources/redis-store.js')).openResourceStore(resourceStoreUrl, config.project);
  if (resourceStore !== undefined) stops.push(() => resourceStore.close());
  // A named session's objects are made and moved on its own clock, and read its scenario states.
  const sessionPart = (scope: string) => sessions.registry.get(scope)?.parts;
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
  control.onClockMove(() => resources.clockMoved());
  // Aborted by `close`: a wait of the object's calls still pending then ends, as one over HTTP does.
  const stopping = new AbortController();
  const calls = control.start({
    runtime,
    limits: limits.gate,
    usage: limits.usage,
    keyLimits,
    logger,
    answers,
    clients,
    futile: { forget: () => futile.forget('') },
    stubs: stubs.store,
    resources: {
      reset: (cleared) => resources.reset('', cleared),
      forget: () => resources.forget(),
      active: () => resources.engine.collections.length > 0,
    },
    routes: (plane) => [
      ...stubs.routes(plane),
      sessions.routes(sessionCounts),
      tlsRoutes(tls?.ca),
      webhookRoutes(webhooks, plane, (id) => sessionPart(id), webhookWaits),
      resources.routes(),
      ...(options.recording === undefined ? [] : [options.recording.routes]),
    ],
    sessions: sessions.lookup,
    stopping: stopping.signal,
  });
  // The upstream step: undici is loaded only when a request first goes upstream (a reload may add `upstream:`).
  const upstream = createUpstreamStep({
    holder: runtime.holder,
    url: options.upstream,
    recording: options.recording?.sink,
  });
  stops.push(() => upstream.close());
  const reply = createReply({ requestLog, logger, retryAfters: createRetryAfterWatch(clients, clock) });
  // The default session: the server's own parts, as before there were sessions.
  const scope: RequestScope = {
    id: DEFAULT_SCOPE_ID,
    journal: control.journal,
    clock,
    answers,
    limits: withMonthStatus(limits.gate, (now) => limits.usage.count(now)),
    keyLimits,
    key: undefined,
  };
  const parts: StepParts = {
    reply,
    sessions: sessions.registry,
    stubs: stubs.store,
    sessionStubs: (id) => stubs.sessionStore(id),
    upstream,
    violations,
    get failures() {
      return runtime.failures; // a reload that changes the seed swaps it
    },
    futile,
    logger,
    // `serve --workers` without a fleet: an answer's setState is every worker's before it is sent (a fleet shares them itself).
    ...(hub === undefined || fleet !== undefined
      ? {}
      : { shareStates: (moves: ReadonlyArray<readonly [string, string]>) => hub.others({ op: 'states', moves }) }),
    // One source of fault and latency-shape draws for the answer step and its streams, kept across reloads.
    resilience: createResilienceSource(),
    webhooks,
    resources,
    resourceView: (x) => resources.view(x.scope.id),
  };
  parts.streams = streamAnswers(parts);
  // `server.headers` draw from the seed, apart per worker of `serve --workers` (each counts its own requests).
  const serverHeaders = {
    seed: () => runtime.failures.seed,
    states: () => answers.states,
    now: clock,
    key: `server.headers\u0000worker\u0000${process.env[SLOT_ENV] ?? ''}`,
  };
  const handler = createRequestHandler({
    holder: runtime.holder,
    reply,
    requestLog,
    journal: control.journal,
    admin: control.admin.handle,
    steps: requestSteps(parts),
    scope,
    serverHeaders,
  });
  options.onHandler?.(handler);

  // The same handler on every port (HTTP, HTTPS, a worker's own): one request path. They stop together.
  const fronts: HttpFront[] = [];
  let own: OwnPort | undefined;
  stops.push(async () => {
    control.admin.close(); // event streams and waits never finish on their own
    hub?.close(); // calls to the other workers resolve
    await Promise.all(fronts.map((f) => (opened ? f.close() : f.abort())));
    await own?.close();
  });
  const front = await startHttpFront(handler, {
    port: options.port ?? config.server.port,
    host,
    timeouts: options.httpTimeouts,
  });
  fronts.push(front);
  const secure =
    https === undefined || tls === undefined
      ? undefined
      : await startHttpFront(handler, { port: https.port, host, timeouts: options.httpTimeouts, tls: tls.credentials });
  if (secure !== undefined) fronts.push(secure);
  own = options.ownPort ? await import('./http/own-port.js').then((m) => m.listenOwnPort(handler)) : undefined;

  const watching = options.watch === true && file !== undefined;
  if (watching) {
    // Loaded only when watching: a start without watching does not load the watcher or the config diff.
    const { watchServedFiles } = await import('./watch/served-files.js');
    const watch = await watchServedFiles(file, runtime, limits.usage, logger);
    stops.push(() => watch.close());
  }
  // Register once watching, before answering anything: rotate-key finds running servers here and
  // waits until they serve the new key, so a registered server must already be watching.
  const unregister = file === undefined ? undefined : await register(file, own?.url ?? front.url, watching, logger);
  // Removes the entry even on process.exit (a second Ctrl-C); listServers also drops dead pids.
  const unregisterOnExit = () => unregister?.sync();
  process.once('exit', unregisterOnExit);
  // First at a stop: a server that takes no new connections cannot confirm a rotation, so rotate-key should not wait for it.
  stops.push(async () => {
    await unregister?.();
    process.removeListener('exit', unregisterOnExit);
  });
  // Then read the file once more, after both: a change made since loading (before the watches were
  // ready) would go unseen otherwise, and a rotate-key that listed the registry before this entry was
  // there (and so waited for nobody) wrote before this read — this server answers with its key.
  if (file !== undefined) await runtime.reload();
  // A host of a fleet: registered, with the fleet's clock, stubs and scenario states, before its first answer.
  if (fleet !== undefined) {
    const clockTaken = await fleet.join({
      address: own?.url ?? front.url,
      revision: runtime.holder.current.config.revision,
      virtualClock: control.virtualClock,
    });
    if (clockTaken !== undefined) options.onFleetClock?.(clockTaken);
    // The fleet's sessions, before the first answer; again each time Redis is back.
    const takeSessions = (): Promise<void> =>
      sessions.registry
        .catchUp()
        .catch((err: Error) => logger.warn(`fleet: could not read the sessions: ${err.message}`));
    await takeSessions();
    fleet.onBack(() => void takeSessions());
    runtime.onSwap((prev, next) => {
      fleet.configChanged(next.revision);
      if (options.fleet === undefined && prev.fleet?.store !== next.fleet?.store)
        alikeLines(logger).warn(
          'fleet.store changed: this server keeps the Redis it started with until it is restarted',
        );
    });
  }
  opened = true;
  for (const f of fronts) f.open();

  let closing: Promise<void> | undefined;
  // The OpenAPI description is read by the first request that needs it; its problems are logged then, as a failed reload's.
  if (runtime.holder.current.config.openapi !== undefined) {
    const late = import('./validate/late-report.js').then((m) =>
      m.readDescriptionLater(runtime.holder.current, logger, () => closing === undefined),
    );
    late.catch((err: Error) => logger.warn(`the OpenAPI description could not be read: ${err.message}`));
  }
  return {
    url: front.url,
    port: front.port,
    ...(secure === undefined ? {} : { httpsUrl: secure.url, httpsPort: secure.port }),
    ...(tls?.ca === undefined ? {} : { ca: tls.ca, caFile: tls.caFile }),
    get config() {
      return runtime.holder.current.config;
    },
    close: () => {
      stopping.abort();
      return (closing ??= stops.unwind());
    },
    reload: () => runtime.reload(),
    adminToken: control.adminToken,
    // Once `close` is called, every call rejects at once as one to a stopped server does, doing nothing.
    ...refusedWhenClosed(
      {
        ...calls,
        ...stubs.calls(),
        webhooks: webhookCalls(webhooks, stopping.signal),
        sessions: sessions.calls(sessionCounts, front.url),
        ...resources.calls(),
      },
      () => stopping.signal.aborted,
      front.url,
    ),
    clients: () => clients.list(),
    violatedRequests: () => violations.violated,
  };
}

/** The summaries of a stop, on stderr: clients that retried early (a worker's go to the primary, which prints one for the whole server), then validation. */
async function summarize(
  clients: ClientTracker,
  violations: ViolationTally,
  hub: WorkerHub | undefined,
  logger: Logger,
): Promise<void> {
  if (hub !== undefined) await hub.final(clients.list());
  else {
    const summary = clients.summary();
    if (summary !== undefined) logger.info(summary);
  }
  const validation = violations.summary();
  if (validation !== undefined) logger.info(validation);
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
function stubSession(parts: SessionParts): StubSession {
  return {
    answers: parts.answers,
    limits: parts.limits,
    usage: parts.usage,
    keyLimits: parts.keyLimits,
    clock: parts.clock,
    report: () => parts.plane.usage(),
  };
}

/** The names of a config's `keys:`. */
const keyNames = (c: Config): string[] => (c.keys ?? []).map((k) => k.name);

/** Opens the server's part in a fleet when `--fleet` or `fleet.store` names one; says so when `fleet.store` reads a variable that is not set. */
async function openFleet(
  options: MockServerOptions,
  config: Config,
  logger: Logger,
  hub: WorkerHub | undefined,
  keyNames: () => readonly string[],
): Promise<Fleet | undefined> {
  const url = options.fleet ?? (config.fleet?.url === '' ? undefined : config.fleet?.url);
  if (url === undefined) {
    if (config.fleet !== undefined)
      logger.warn(
        `fleet.store reads ${config.fleet.missing.join(', ')}, not set in the environment: this server runs alone, not as a host of a fleet`,
      );
    return undefined;
  }
  const { openFleet: open } = await import('./fleet/index.js');
  return open({ url, project: config.project, logger, keyNames, ...(hub === undefined ? {} : { workers: hub }) });
}

/** Records the server under `.mockapi/servers/` for rotate-key; a failure is a warning, not a stop. */
function register(file: string, url: string, watch: boolean, logger: Logger): Promise<Unregister | undefined> {
  return registerServer(file, { url, watch }).catch((err: Error) => {
    logger.warn(`could not register this server for rotate-key under .mockapi/: ${err.message}`);
    return undefined;
  });
}

/** Why a `serve --workers` worker without a store does not serve `config` (see workers/needs-store.ts). */
function reloadNeedsStore(config: Config): string | undefined {
  const need = storeNeed(config);
  return need === undefined ? undefined : `${need.why} ${need.remedy}`;
}
