import { dirname, resolve } from 'node:path';
import pc from 'picocolors';
import { alikeLines, type Logger } from '../../logger.js';
import type { LogFormat } from '../../http/request-log.js';
import {
  ConfigError,
  ListenError,
  startMockServer,
  TlsSetupError,
  type HttpsOption,
  type MockServer,
  type MockServerOptions,
} from '../../mock-server.js';
import { resolveStateFile } from '../../state/state-file.js';
import { formatIssue } from '../../config/load.js';
import { resolveAuthValue } from '../../config/auth-value.js';
import { EXIT_FAILURE, EXIT_OK, type CommandIO } from './io.js';

export interface ServeOptions {
  config: string;
  port?: number;
  host?: string;
  watch?: boolean;
  seed?: number;
  /** A file, `false` for memory only, undefined for `.mockapi/state.json` beside the config. */
  state?: string | boolean;
  log?: LogFormat;
  /** `--store <url>`: Redis URL of the shared limits, over the config's `limits.store`. */
  store?: string;
  /** `--fleet <url>`: one host of a fleet sharing this Redis, over the config's `fleet.store`. */
  fleet?: string;
  /** `--workers <n>`: n processes on one port (node:cluster), see serve-workers.ts. */
  workers?: number;
  /** `--clock <ISO time>`: a virtual clock. */
  clock?: string;
  /** `--admin-token <t>`: required on admin calls. */
  adminToken?: string;
  /** `--drain-webhooks <duration>`: at stop, how long (ms) to wait for pending webhook deliveries. */
  drainWebhooks?: number;
  /** `--upstream <url>`: requests no endpoint answers go there. */
  upstream?: string;
  /** `--fail-on-violations`: exit 1 at stop when a request broke the OpenAPI description. */
  failOnViolations?: boolean;
  /** `--https [port]`: `true` without a port. */
  https?: number | boolean;
  /** `--tls-cert <file>` and `--tls-key <file>`: a certificate of the user's own (either one turns HTTPS on). */
  tlsCert?: string;
  tlsKey?: string;
}

/** What `mockapi record` adds to a serve: the recording, and a check that an upstream is known. */
export interface RecordingServe {
  recording: NonNullable<MockServerOptions['recording']>;
  requireUpstream: boolean;
  /** Told of the server once it is up (its `config` follows reloads). */
  onStart(server: MockServer): void;
}

/** The HTTPS the flags ask for, over the config's `server.https`; undefined = as the config says. */
export function httpsFromFlags(opts: Pick<ServeOptions, 'https' | 'tlsCert' | 'tlsKey'>): HttpsOption | undefined {
  if (opts.https === undefined && opts.tlsCert === undefined && opts.tlsKey === undefined) return undefined;
  return {
    ...(typeof opts.https === 'number' ? { port: opts.https } : {}),
    ...(opts.tlsCert === undefined ? {} : { cert: opts.tlsCert }),
    ...(opts.tlsKey === undefined ? {} : { key: opts.tlsKey }),
  };
}

/** The ready line: every URL the server answers on. */
export function readyLine(url: string, httpsUrl: string | undefined, endpoints: string): string {
  return `mockapi listening on ${url}${httpsUrl === undefined ? '' : ` and ${httpsUrl}`} (${endpoints})`;
}

/**
 * The start line of `--clock`: where the clock started or, on a host that joined a fleet whose
 * virtual clock was running, that it took the fleet's time instead (docs/several-instances.md).
 */
export function clockLine(clock: string, fleetClock: number | undefined): string {
  const start = new Date(Date.parse(clock)).toISOString();
  const what =
    fleetClock === undefined
      ? `virtual clock started at ${start}`
      : `virtual clock: took the fleet's, now ${new Date(fleetClock).toISOString()} (in place of --clock ${start})`;
  return `${what}; move it with POST /__mockapi/clock`;
}

/** How a worker of `serve --workers` tells the primary it answers requests (instead of printing the ready line). */
export type AnnounceReady = (url: string, endpoints: number, httpsUrl?: string) => void;

/**
 * Starts listening for the request to stop and resolves with it; the CLI passes SIGINT/SIGTERM
 * (and makes a second one exit 130). Called before the server starts, so no signal can find the
 * process without its handler.
 */
export type StopSignal = () => Promise<string>;

function stderrLogger(io: CommandIO, color: boolean): Logger {
  const c = pc.createColors(color);
  return {
    info: (message) => io.err(`${c.dim('mockapi')} ${message}`),
    warn: (message) => io.err(`${c.yellow('mockapi warning:')} ${message}`),
    error: (message) => io.err(`${c.red('mockapi error:')} ${message}`),
  };
}

function wantsColor(stream: NodeJS.WriteStream): boolean {
  return Boolean(stream.isTTY) && !('NO_COLOR' in process.env) && process.env.TERM !== 'dumb';
}

/** `mockapi serve`: start, print the ready line, serve until SIGINT/SIGTERM, then stop gracefully. */
export async function runServe(
  opts: ServeOptions,
  io: CommandIO,
  untilStopped: StopSignal,
  worker?: AnnounceReady,
  recording?: RecordingServe,
): Promise<number> {
  if (opts.workers !== undefined && opts.failOnViolations === true) {
    io.err(
      'mockapi: --fail-on-violations works with one process; drop --workers (each worker sees only its own requests)',
    );
    return EXIT_FAILURE;
  }
  if (opts.workers !== undefined)
    return (await import('./serve-workers.js')).serveWithWorkers(
      { ...opts, workers: opts.workers },
      io,
      untilStopped,
      runServe,
    );
  // Before anything can answer: a signal from the first answer on, or even during the
  // start, is a graceful stop, taken as soon as the server is up.
  const stopped = untilStopped();
  const configFile = resolve(opts.config);
  const printed = stderrLogger(io, wantsColor(process.stderr));
  // A worker of `serve --workers`: the lines every worker writes alike are written by one of them.
  const logger = worker === undefined ? printed : (await import('../../workers/lead-lines.js')).workerLines(printed);
  // The same resolution as `mockapi usage`, so both agree on where the count lives.
  const state = resolveStateFile(dirname(configFile), opts.state === true ? undefined : opts.state) ?? false;
  let server;
  let fleetClock: number | undefined;
  try {
    server = await startMockServer({
      config: configFile,
      port: opts.port,
      host: opts.host,
      watch: opts.watch ?? true,
      seed: opts.seed,
      state,
      log: opts.log ?? 'pretty',
      logStream: process.stdout,
      color: wantsColor(process.stdout),
      logger,
      store: opts.store,
      fleet: opts.fleet,
      ownPort: worker !== undefined,
      clock: opts.clock,
      onFleetClock: (now) => (fleetClock = now),
      adminToken: opts.adminToken,
      drainWebhooks: opts.drainWebhooks,
      upstream: opts.upstream,
      recording: recording?.recording,
      https: httpsFromFlags(opts),
    });
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const issue of err.issues) io.err(formatIssue(issue));
      io.err(
        `mockapi: ${err.issues.length} problem${err.issues.length === 1 ? '' : 's'} in ${opts.config}; not starting`,
      );
      return EXIT_FAILURE;
    }
    if (err instanceof TlsSetupError) {
      io.err(`mockapi: HTTPS: ${err.message}; not starting`);
      return EXIT_FAILURE;
    }
    if (err instanceof ListenError) {
      io.err(`mockapi: ${err.cliMessage}`);
      return EXIT_FAILURE;
    }
    throw err;
  }
  const upstreamAuth = server.config.upstream?.auth;
  if (upstreamAuth !== undefined) {
    const unset = resolveAuthValue(upstreamAuth.value, process.env).missing;
    if (unset.length > 0)
      alikeLines(logger).warn(
        `upstream.auth reads ${unset.join(', ')}, not set in the environment: requests sent upstream get 502 until it is`,
      );
  }
  if (recording !== undefined) {
    if (recording.requireUpstream && opts.upstream === undefined && server.config.upstream === undefined) {
      io.err(`mockapi: recording needs an upstream: set upstream.url in ${opts.config} or pass --upstream <url>`);
      await server.close();
      return EXIT_FAILURE;
    }
    recording.onStart(server);
  }
  const count = server.config.endpoints.length;
  if (worker) worker(server.url, count, server.httpsUrl);
  else {
    io.out(readyLine(server.url, server.httpsUrl, `${count} endpoint${count === 1 ? '' : 's'}`));
    io.out(`inspector: ${server.url}/__mockapi/`);
  }
  // A token this server made (bound beyond loopback, none given): the only way its user learns it.
  if (server.adminToken !== undefined && opts.adminToken === undefined)
    logger.info(`admin API token: ${server.adminToken} (send it as X-Mockapi-Admin-Token)`);
  if (opts.clock !== undefined) logger.info(clockLine(opts.clock, fleetClock));
  const signal = await stopped;
  logger.info(`${signal} received, finishing in-flight requests…`);
  await server.close();
  if (opts.failOnViolations === true && server.violatedRequests() > 0) {
    io.err(
      `mockapi: ${server.violatedRequests()} request${server.violatedRequests() === 1 ? '' : 's'} broke the OpenAPI description (--fail-on-violations)`,
    );
    return EXIT_FAILURE;
  }
  return EXIT_OK;
}
