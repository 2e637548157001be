import { resolve } from 'node:path';
import { compileConfig } from './answer/compile.js';
import { createAnswerState } from './answer/answer-state.js';
import { createConfigRuntime, type ReloadResult } from './answer/config-runtime.js';
import { loadConfig, configFromObject, formatIssue } from './config/load.js';
import type { Config, ConfigIssue, LoadResult } from './config/types.js';
import { systemClock } from './clock.js';
import { silentLogger, type Logger } from './logger.js';
import { createLimitGate } from './pipeline/limits.js';
import { createKeyLimits } from './pipeline/key-limits.js';
import { withMonthStatus } from './pipeline/limit-headers.js';
import { createRequestLogger } from './http/request-log.js';
import { createRequestHandler } from './http/handler.js';
import { createReply } from './http/reply.js';
import { createRetryAfterWatch } from './control/retry-after-watch.js';
import { createResilienceSource } from './pipeline/resilience.js';
import { requestSteps, type StepParts } from './request-steps.js';
import { streamAnswers } from './stream/answer.js';
import { createViolationTally } from './validate/tally.js';
import { createClientTracker } from './control/early-retries.js';
import { startHttpFront } from './http/http-front.js';
import { ListenError } from './http/listen.js';
import { registerServer, type Unregister } from './state/registry.js';
import { keepTickObjectShape } from './tick-shape.js';
import { createControl } from './control/control.js';
import { createStubs } from './stubs/index.js';
import { createWebhookService, stopWebhooks, webhookCalls, webhookRoutes } from './webhooks/index.js';
import { createUpstreamStep } from './upstream/step.js';
import { httpsSettings, type HttpsOption } from './tls/settings.js';
import { tlsRoutes } from './tls/routes.js';
import { TlsSetupError } from './tls/tls-error.js';
import { createResources } from './resources/index.js';

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
  return loadConfig(resolve(source ?? DEFAULT_CONFIG_FILE));
}

/** A started part of a server, stopped by the composition root in reverse order of starting. */
type Stop = () => Promise<void>;

/**
 * Starts a mock server, for test suites (vitest or jest global setup) and for `mockapi serve`.
 * Rejects with {@link ConfigError} for an invalid config and {@link ListenError} when it cannot listen.
 *
 * The composition root: it builds the parts and starts them in order — control plane (clock,
 * journal; its admin API once the limits exist), config runtime (what is served, and reload),
 * limits and usage store, request log, HTTP front (listening, requests held
 * at its gate), file watches, registry entry — then opens the gate. From the first answer on, the
 * server is registered and watching, so a rotation reaches it. `close` stops the parts
 * in the order a graceful stop needs.
 */
export async function startMockServer(options: MockServerOptions = {}): Promise<MockServer> {
  keepTickObjectShape();
  const logger = options.logger ?? silentLogger;
  const loaded = await load(options.config);
  if (!loaded.ok) throw new ConfigError(loaded.issues);
  const file = loaded.config.file;
  const host = options.host ?? loaded.config.server.host;
  // HTTPS: the certificate before anything else starts, so a wrong one stops the start cleanly. Loaded only when on.
  const https = httpsSettings(options.https, loaded.config.server.https);
  const tls = https === undefined ? undefined : await (await import('./tls/setup.js')).prepareHttps(https, { configDir: loaded.config.dir, bindHost: host });
  // A `serve --workers` worker: its journal stays here; the admin API asks the other workers when called (control/hub.ts).
  const hub = options.ownPort ? (await import('./control/hub.js')).joinHub() : undefined;
  const control = createControl({ clock: options.clock ?? systemClock, journal: loaded.config.server.journal, bindHost: host, adminToken: options.adminToken, hub });
  const { clock } = control;

  const runtime = createConfigRuntime({ initial: await compileConfig(loaded.config), seed: options.seed, logger });
  // Sequence positions, request counters and scenario states: outside the compiled config, so reloads keep them.
  const answers = createAnswerState(loaded.config);
  runtime.onSwap((_prev, next) => answers.adopt(next));
  // Where counts are kept: the same for the default key's limits and for each key of `keys:`.
  const limitPlace = {
    state: options.state ?? false,
    clock,
    logger,
    store: options.store ?? loaded.config.limits.store,
    storeDown: loaded.config.limits.storeDown,
    project: loaded.config.project,
  };
  const limits = await createLimitGate(limitPlace);
  // The keys of `keys:`, each limited on its own, and the endpoints' own windows (src/pipeline/key-limits.ts).
  const keyLimits = createKeyLimits(limitPlace);
  const keyNames = (config: Config) => (config.keys ?? []).map((k) => k.name);
  await keyLimits.prepare(keyNames(loaded.config)).catch(async (err: unknown) => {
    // Nothing was answered: write what was counted and stop the timers before giving up.
    await keyLimits.close();
    await limits.close();
    throw err;
  });
  runtime.onSwap((_prev, next) => void keyLimits.prepare(keyNames(next)).catch((err: Error) => logger.warn(`could not open the usage of a key: ${err.message}`)));
  // Retry-After given per client, summed up on stderr when the server stops.
  // With `serve --workers`, kept per worker and merged when asked (control/hub.ts).
  const clients = hub === undefined ? createClientTracker() : hub.shareClients(createClientTracker());
  // Run-time stubs: matched before the config's endpoints, kept by reloads, removed by reset.
  const stubs = await createStubs({ runtime, answers, logger, limits: limits.gate, usage: limits.usage, keyLimits, clock, worker: options.ownPort === true });
  // Webhooks: sent off the request path, on the server's clock; a clock move fires the retries due.
  const webhooks = createWebhookService({ holder: runtime.holder, clock, seed: () => runtime.failures.seed });
  control.onClockMove(() => webhooks.clockMoved());
  // Resources: objects that remember, kept by reloads, moved on the server's clock, put back to their seed by reset.
  // With a shared store (limits.store, --store) the objects and idempotency keys are in Redis, for every worker and host.
  const resourceStoreUrl = (loaded.config.resources?.collections.length ?? 0) > 0 ? (options.store ?? loaded.config.limits.store) : undefined;
  const resourceStore = resourceStoreUrl === undefined ? undefined : await (await import('./resources/redis-store.js')).openResourceStore(resourceStoreUrl, loaded.config.project);
  const resources = await createResources({ holder: runtime.holder, clock, seed: () => runtime.failures.seed, logger, webhooks, states: () => answers.states, ...(resourceStore === undefined ? {} : { store: resourceStore }) });
  runtime.onSwap((_prev, next) => void resources.follow(next).catch((err: Error) => logger.warn(`resources: ${err.message}`)));
  control.onClockMove(() => resources.clockMoved());
  const calls = control.start({
    runtime, limits: limits.gate, usage: limits.usage, keyLimits, logger, answers, clients, stubs: stubs.store,
    resources: { reset: () => resources.reset(), forget: () => resources.forget(), active: () => resources.engine.collections.length > 0 },
    routes: (plane) => [...stubs.routes(plane), tlsRoutes(tls?.ca), webhookRoutes(webhooks, plane), resources.routes(), ...(options.recording === undefined ? [] : [options.recording.routes])],
  });
  // The upstream step: undici is loaded only when a request first goes upstream (a reload may add `upstream:`).
  const upstream = createUpstreamStep({ holder: runtime.holder, url: options.upstream, recording: options.recording?.sink });
  const requestLog = createRequestLogger({
    format: options.log ?? 'off',
    stream: options.logStream ?? process.stdout,
    color: options.color ?? false,
    // A stop takes 2 s at most besides endpoint delays; a stuck output costs log lines, not more time.
    closeTimeoutMs: 500,
    redactor: () => runtime.holder.current.redactor,
  });
  const violations = createViolationTally();
  const reply = createReply({ journal: control.journal, requestLog, clock, logger, answers, retryAfters: createRetryAfterWatch(clients, clock) });
  // One source of fault and latency-shape draws for the answer step and its streams, kept across reloads.
  const resilience = createResilienceSource();
  const parts: StepParts = {
    reply,
    journal: control.journal,
    clock,
    limits: withMonthStatus(limits.gate, (now) => limits.usage.count(now)),
    keyLimits,
    stubs: stubs.store,
    upstream,
    violations,
    get failures() {
      return runtime.failures;
    },
    answers,
    resilience,
    webhooks,
    resources,
    resourceView: () => resources.view(''),
  };
  parts.streams = streamAnswers(parts);
  const handler = createRequestHandler({ holder: runtime.holder, reply, requestLog, journal: control.journal, admin: control.admin.handle, steps: requestSteps(parts) });
  const front = await startHttpFront(handler, { port: options.port ?? loaded.config.server.port, host, timeouts: options.httpTimeouts }).catch(async (err: unknown) => {
    await limits.close();
    await keyLimits.close();
    throw err;
  });
  // The same handler over TLS: one pipeline, two ports.
  const secure =
    https === undefined || tls === undefined
      ? undefined
      : await startHttpFront(handler, { port: https.port, host, timeouts: options.httpTimeouts, tls: tls.credentials }).catch(async (err: unknown) => {
          await front.abort();
          await limits.close();
          await keyLimits.close();
          throw err;
        });

  const own = options.ownPort ? await import('./http/own-port.js').then((m) => m.listenOwnPort(handler)) : undefined;
  const watching = options.watch === true && file !== undefined;
  let stopWatching: Stop | undefined;
  if (watching) {
    try {
      // Loaded only when watching: a start without watching does not load the watcher or the config diff.
      const { watchServedFiles } = await import('./watch/served-files.js');
      stopWatching = (await watchServedFiles(file, runtime, limits.usage, logger)).close;
    } catch (err) {
      // Nothing was answered: let go of the port, of what waits at the gate and of the state file.
      await front.abort();
      await secure?.abort();
      await limits.close();
      await keyLimits.close();
      throw err;
    }
  }
  // Register once watching, before answering anything: rotate-key finds running servers here and
  // waits until they serve the new key, so a registered server must already be watching.
  const unregister = file === undefined ? undefined : await register(file, own?.url ?? front.url, watching, logger);
  // Then read the file once more, after both: a change made since loading (before the watches were
  // ready) would go unseen otherwise, and a rotate-key that listed the registry before this entry was
  // there (and so waited for nobody) wrote before this read — this server answers with its key.
  if (file !== undefined) await runtime.reload();
  // Removes the entry even on process.exit (a second Ctrl-C); listServers also drops dead pids.
  const unregisterOnExit = () => unregister?.sync();
  process.once('exit', unregisterOnExit);
  front.open();
  secure?.open();

  let closing: Promise<void> | undefined;
  function close(): Promise<void> {
    closing ??= (async () => {
      // First: a server that takes no new connections cannot confirm a rotation, so rotate-key
      // should not wait for it.
      await unregister?.();
      process.removeListener('exit', unregisterOnExit);
      control.admin.close(); // event streams and waits never finish on their own
      hub?.close();
      await Promise.all([front.close(), secure?.close()]);
      await own?.close();
      await upstream.close();
      stubs.close(); // after the answers: a request waiting for one of a stub's `times` gets it
      await resources.close(); // after the answers: `.mockapi/resources.json` holds what they did
      await stopWebhooks(webhooks, options.drainWebhooks ?? 0, logger);
      await stopWatching?.();
      await limits.close();
      await keyLimits.close();
      await requestLog.close();
      // A worker's clients go to the primary, which prints one summary for the whole server.
      if (hub !== undefined) await hub.final(clients.list());
      else {
        const summary = clients.summary();
        if (summary !== undefined) logger.info(summary);
      }
      const validation = violations.summary();
      if (validation !== undefined) logger.info(validation);
    })();
    return closing;
  }

  return {
    url: front.url,
    port: front.port,
    ...(secure === undefined ? {} : { httpsUrl: secure.url, httpsPort: secure.port }),
    ...(tls?.ca === undefined ? {} : { ca: tls.ca, caFile: tls.caFile }),
    get config() {
      return runtime.holder.current.config;
    },
    close,
    reload: () => runtime.reload(),
    adminToken: control.adminToken,
    ...calls,
    ...stubs.calls(),
    clients: () => clients.list(),
    webhooks: webhookCalls(webhooks),
    ...resources.calls(),
    violatedRequests: () => violations.violated,
  };
}

/** Records the server under `.mockapi/servers/` for rotate-key; a failure is a warning, not a stop. */
function register(file: string, url: string, watch: boolean, logger: Logger): Promise<Unregister | undefined> {
  return registerServer(file, { url, watch }).catch((err: Error) => {
    logger.warn(`could not register this server for rotate-key under .mockapi/: ${err.message}`);
    return undefined;
  });
}
