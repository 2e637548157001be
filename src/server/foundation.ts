// The first phase of a server's start: what every later part stands on — the workers hub of
// `serve --workers`, the host's part in a fleet, the HTTPS certificate, the clients and validation
// tallies summed up at stop, and the control plane (clock, journal; its admin API starts later).
import type { Clock } from '../clock.js';
import type { Config, HttpsConfig } from '../config/types.js';
import { createControl, type Control } from '../control/control.js';
import { createClientTracker, type ClientTracker } from '../control/early-retries.js';
import type { Fleet } from '../fleet/index.js';
import type { Logger } from '../logger.js';
import type { MockServerOptions } from '../mock-server-types.js';
import { systemClock } from '../clock.js';
import { httpsSettings } from '../tls/settings.js';
import type { PreparedHttps } from '../tls/setup.js';
import { createViolationTally, type ViolationTally } from '../validate/tally.js';
import type { WorkerHub } from '../workers/hub.js';
import { keyNames, type StartContext } from './context.js';

export interface Foundation {
  hub: WorkerHub | undefined;
  fleet: Fleet | undefined;
  /** The shared store: `--store`, else `limits.store`, else the fleet's Redis. */
  storeUrl: string | undefined;
  https: HttpsConfig | undefined;
  tls: PreparedHttps | undefined;
  clients: ClientTracker;
  violations: ViolationTally;
  control: Control;
  clock: Clock;
}

export async function startFoundation(ctx: StartContext): Promise<Foundation> {
  const { options, config, logger, stops } = ctx;
  // A `serve --workers` worker: its journal stays here; the admin API asks the other workers when called (workers/hub.ts).
  const hub = options.ownPort ? (await import('../workers/hub.js')).joinHub() : undefined;
  if (hub !== undefined) stops.push(() => hub.close());
  // A host of a fleet (fleet.store, --fleet): its parts share what they keep through Redis (src/fleet/). Loaded only then.
  // (the config served at the time: a reload may name other keys)
  const fleet = await openFleet(
    options,
    config,
    logger,
    hub,
    () => keyNames(ctx.served()),
    (text) => ctx.shown(text),
  );
  if (fleet !== undefined) stops.push(() => fleet.close()); // last: what the journal still holds is written
  const storeUrl = options.store ?? config.limits.store ?? fleet?.url;
  const { https, tls } = await prepareTls(ctx, fleet);
  // Retry-After given per client, summed up on stderr when the server stops, as is validation.
  // With `serve --workers`, kept per worker and merged when asked (workers/hub.ts).
  const clients = hub === undefined ? createClientTracker() : hub.shareClients(createClientTracker());
  const violations = createViolationTally();
  stops.push(() => (ctx.opened ? summarize(clients, violations, hub, logger) : undefined));
  const control = createControl({
    clock: options.clock ?? systemClock,
    journal: config.server.journal,
    bindHost: ctx.host,
    adminToken: options.adminToken,
    hub,
    ...(fleet === undefined ? {} : { fleet: fleet.link }),
  });
  return { hub, fleet, storeUrl, https, tls, clients, violations, control, clock: control.clock };
}

/** HTTPS: the certificate before anything else starts, so a wrong one stops the start cleanly. Loaded only when on. */
async function prepareTls(
  ctx: StartContext,
  fleet: Fleet | undefined,
): Promise<{ https: HttpsConfig | undefined; tls: PreparedHttps | undefined }> {
  const { options, config } = ctx;
  const https = httpsSettings(options.https, config.server.https);
  if (fleet !== undefined && https !== undefined && https.cert === undefined && https.key === undefined)
    await fleet.shareCa(config.dir);
  const tls =
    https === undefined
      ? undefined
      : await (await import('../tls/setup.js')).prepareHttps(https, { configDir: config.dir, bindHost: ctx.host });
  return { https, tls };
}

/** Opens the server's part in a fleet when `--fleet` or `fleet.store` names one; says so when `fleet.store` reads a variable that is not set. */
async function openFleet(
  options: MockServerOptions,
  config: Config,
  logger: Logger,
  hub: WorkerHub | undefined,
  keyNames: () => readonly string[],
  shown: (text: string) => string,
): Promise<Fleet | undefined> {
  const url = options.fleet ?? (config.fleet?.url === '' ? undefined : config.fleet?.url);
  if (url === undefined) {
    if (config.fleet !== undefined)
      logger.warn(
        `fleet.store reads ${config.fleet.missing.join(', ')}, not set in the environment: this server runs alone, not as a host of a fleet`,
      );
    return undefined;
  }
  const { openFleet: open } = await import('../fleet/index.js');
  return open({
    url,
    project: config.project,
    logger,
    keyNames,
    shown,
    ...(hub === undefined ? {} : { workers: hub }),
  });
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
