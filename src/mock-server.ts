import { resolve } from 'node:path';
import type { ReloadResult } from './answer/config-runtime.js';
import { loadConfig, configFromObject, formatIssue } from './config/load.js';
import type { ConfigIssue, LoadResult } from './config/types.js';
import { ListenError } from './http/listen.js';
import { silentLogger } from './logger.js';
import type { MockServer, MockServerOptions } from './mock-server-types.js';
import { startAdmin } from './server/admin.js';
import { beforeOpening } from './server/before-opening.js';
import { startCapabilities } from './server/capabilities.js';
import { startContext, type StartContext } from './server/context.js';
import { startFoundation } from './server/foundation.js';
import { startLimits } from './server/limits.js';
import { listen } from './server/listening.js';
import type { ServerParts } from './server/parts.js';
import { startRequestHandler } from './server/request-handler.js';
import { startRuntime } from './server/runtime.js';
import { serverObject } from './server/server-object.js';
import { createStopStack } from './stop-stack.js';
import { keepTickObjectShape } from './tick-shape.js';
import type { HttpsOption } from './tls/settings.js';
import { TlsSetupError } from './tls/tls-error.js';

export { ListenError, TlsSetupError };
export type { HttpsOption };
export type { ReloadResult };
export type { MockServer, MockServerOptions };

export const DEFAULT_PORT = 4010;
export const DEFAULT_CONFIG_FILE = 'mockapi.yaml';

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
 * The composition root: it builds the parts and starts them in order, one phase a file of src/server/
 * (startParts below, on one screen) — the foundation (workers hub, fleet, HTTPS certificate, clients
 * and validation tallies, control plane: clock, journal), the config runtime (what is served, and
 * reload; request log, answer state), limits and usage store, key limits, the capabilities (sessions,
 * stubs, webhooks, resources), the admin API over every capability's routes, the request handler (the
 * request steps, src/request-steps.ts), HTTP fronts (listening, requests held at their gate), file
 * watches, registry entry, a last read of the config and the fleet join — then opens the gate and
 * returns the server's object. From the first answer on, the server is registered and watching, so a
 * rotation reaches it. Each part pushes its stop as it starts: a failed start and `close` stop them
 * in reverse order.
 */
export async function startMockServer(options: MockServerOptions = {}): Promise<MockServer> {
  keepTickObjectShape();
  const logger = options.logger ?? silentLogger;
  const loaded = await load(options.config);
  if (!loaded.ok) throw new ConfigError(loaded.issues);
  const stops = createStopStack();
  try {
    return await startParts(startContext(options, loaded.config, logger, stops));
  } catch (err) {
    // Nothing was answered: let go of the ports, of what waits at the gate and of the state files.
    await stops
      .unwind()
      .catch((stopErr: unknown) => logger.warn(`while stopping after a failed start: ${(stopErr as Error).message}`));
    throw err;
  }
}

/** The phases in order; each pushes the stops of what it started onto `ctx.stops`. */
async function startParts(ctx: StartContext): Promise<MockServer> {
  const foundation = await startFoundation(ctx);
  const served = { ...foundation, ...(await startRuntime(ctx, foundation)) };
  const counted = { ...served, ...(await startLimits(ctx, served)) };
  const parts: ServerParts = { ...counted, ...(await startCapabilities(ctx, counted)) };
  const admin = startAdmin(ctx, parts);
  const handler = startRequestHandler(ctx, parts);
  const listening = await listen(ctx, parts, handler);
  await beforeOpening(ctx, parts, listening.own?.url ?? listening.front.url);
  ctx.opened = true;
  for (const f of listening.fronts) f.open();
  return serverObject(ctx, parts, admin, listening);
}
