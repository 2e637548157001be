import { resolve } from 'node:path';
import type { ReloadResult } from './answer/config-runtime.js';
import { loadConfig, configFromObject, formatIssue } from './config/load.js';
import type { Config, ConfigIssue, LoadResult } from './config/types.js';
import { silentLogger, type Logger } from './logger.js';
import { startContext } from './server/context.js';
import { startFoundation } from './server/foundation.js';
import { startRuntime } from './server/runtime.js';
import { startLimits } from './server/limits.js';
import { startCapabilities } from './server/capabilities.js';
import { startAdmin } from './server/admin.js';
import { startRequestHandler } from './server/request-handler.js';
import { startHttpFront, type HttpFront } from './http/http-front.js';
import type { OwnPort } from './http/own-port.js';
import { createStopStack, type StopStack } from './stop-stack.js';
import { ListenError } from './http/listen.js';
import { registerServer, type Unregister } from './state/registry.js';
import { keepTickObjectShape } from './tick-shape.js';
import { refusedWhenClosed } from './control/after-close.js';
import { webhookCalls } from './webhooks/index.js';
import type { HttpsOption } from './tls/settings.js';
import { TlsSetupError } from './tls/tls-error.js';

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
  const ctx = startContext(options, config, logger, stops);
  const file = config.file;
  const host = ctx.host;
  const foundation = await startFoundation(ctx);
  const { hub, fleet, https, tls, clients, violations, control } = foundation;

  const served = await startRuntime(ctx, foundation);
  const { runtime } = served;
  const counted = await startLimits(ctx, { ...foundation, ...served });
  const { limits } = counted;
  const caps = await startCapabilities(ctx, { ...foundation, ...served, ...counted });
  const { sessions, stubs, webhooks, resources, sessionCounts } = caps;
  const parts = { ...foundation, ...served, ...counted, ...caps };
  const { calls, stopping } = startAdmin(ctx, parts);
  const handler = startRequestHandler(ctx, parts);

  // The same handler on every port (HTTP, HTTPS, a worker's own): one request path. They stop together.
  const fronts: HttpFront[] = [];
  let own: OwnPort | undefined;
  stops.push(async () => {
    control.admin.close(); // event streams and waits never finish on their own
    hub?.close(); // calls to the other workers resolve
    await Promise.all(fronts.map((f) => (ctx.opened ? f.close() : f.abort())));
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
        logger.warn('fleet.store changed: this server keeps the Redis it started with until it is restarted');
    });
  }
  ctx.opened = true;
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

/** Records the server under `.mockapi/servers/` for rotate-key; a failure is a warning, not a stop. */
function register(file: string, url: string, watch: boolean, logger: Logger): Promise<Unregister | undefined> {
  return registerServer(file, { url, watch }).catch((err: Error) => {
    logger.warn(`could not register this server for rotate-key under .mockapi/: ${err.message}`);
    return undefined;
  });
}
