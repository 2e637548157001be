import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { compileConfig, type CompiledConfig } from './answer/compile.js';
import { loadConfig, configFromObject, formatIssue, parseConfig, readConfigFile } from './config/load.js';
import type { Config, ConfigIssue, LoadResult } from './config/types.js';
import { systemClock, type Clock } from './clock.js';
import { silentLogger, type Logger } from './logger.js';
import { createFailureSource, type FailureSource } from './pipeline/failure.js';
import { createLimitGate, type LimitGateHandle } from './pipeline/limits.js';
import { createRequestLogger, type LogFormat } from './http/request-log.js';
import { createRequestHandler, type ConfigHolder } from './http/handler.js';
import { answerClientError, answerConnect, HTTP_SERVER_OPTIONS, type HttpTimeouts } from './http/http-limits.js';
import { formatUrl, listen, ListenError } from './http/listen.js';
import { registerServer } from './state/registry.js';
import { keepTickObjectShape } from './tick-shape.js';

export { ListenError };

export const DEFAULT_PORT = 4010;
export const DEFAULT_CONFIG_FILE = 'mockapi.yaml';

/** Options of {@link startMockServer}; they mirror the `mockapi serve` flags. */
export interface MockServerOptions {
  /** A config file path (default `./mockapi.yaml`) or a config object written as in the YAML file. */
  config?: string | Record<string, unknown>;
  /** `0` picks a free port. Default: the config's `server.port`, else 4010. */
  port?: number;
  /** Default: the config's `server.host`, else `127.0.0.1`. */
  host?: string;
  /** Hot reload on config changes. Default `false` here (the CLI's default is `true`). */
  watch?: boolean;
  /** Makes simulated failures reproducible; overrides the config's `seed`. */
  seed?: number;
  /** Usage state file, or `false` for memory only. Default `false` here (the CLI's default is `.mockapi/state.json`). */
  state?: string | false;
  /** Request log format. Default `off` here. */
  log?: LogFormat;
  /** Where request lines go (default `process.stdout`). */
  logStream?: Writable;
  /** Colour request lines (pretty format only). */
  color?: boolean;
  /** Reloads, warnings and errors. Default: silent. */
  logger?: Logger;
  /** Redis URL of the shared limits (SPEC §12); overrides the config's `limits.store`. */
  store?: string;
  /** @internal `serve --workers`: also listen on a loopback port of this worker alone, and register that one (see listenOwnPort). */
  ownPort?: boolean;
  /** Injected clock, for tests of limits. */
  clock?: Clock;
  /**
   * @internal Overrides of the node:http timeouts in {@link HTTP_SERVER_OPTIONS}, so tests can
   * check slow-client handling in milliseconds instead of seconds. Not for users.
   */
  httpTimeouts?: HttpTimeouts;
}

export interface ReloadResult {
  /** `true` when a new config is now served. */
  changed: boolean;
  /** Problems that kept the previous config in place. */
  issues: ConfigIssue[];
}

/** A running mock server. */
export interface MockServer {
  /** Base URL, e.g. `http://127.0.0.1:4010`; mock endpoints are under `${url}/mock`. */
  url: string;
  port: number;
  /** The config now served. */
  readonly config: Config;
  /** Stops accepting connections, lets in-flight requests finish, flushes usage. */
  close(): Promise<void>;
  /** Re-reads the config file now (hot reload does this on change). Keeps the last good config on error. */
  reload(): Promise<ReloadResult>;
}

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

/**
 * True when `bytes` are exactly the bytes served and no body file is involved, so a reload would
 * change nothing: every reload (the one after the watcher is ready, a `touch`, an edit undone) then
 * costs a read and a hash instead of a parse, validation and compile (about 0.3 s for 10,000
 * endpoints).
 */
function servesBytes(compiled: CompiledConfig, bytes: Buffer): boolean {
  return compiled.bodyFiles.length === 0 && createHash('sha256').update(bytes).digest('hex') === compiled.config.revision;
}

function sameBodies(a: CompiledConfig, b: CompiledConfig): boolean {
  return a.endpoints.length === b.endpoints.length && a.endpoints.every((e, i) => e.body.equals(b.endpoints[i]!.body));
}

/**
 * Starts a mock server, for test suites (vitest or jest global setup) and for `mockapi serve`.
 * Rejects with {@link ConfigError} for an invalid config and {@link ListenError} when it cannot listen.
 */
export async function startMockServer(options: MockServerOptions = {}): Promise<MockServer> {
  keepTickObjectShape();
  const logger = options.logger ?? silentLogger;
  const clock = options.clock ?? systemClock;
  const loaded = await load(options.config);
  if (!loaded.ok) throw new ConfigError(loaded.issues);
  const holder: ConfigHolder = { current: await compileConfig(loaded.config) };
  const file = loaded.config.file;

  let failures: FailureSource = createFailureSource(options.seed ?? loaded.config.seed);
  const limits: LimitGateHandle = await createLimitGate({
    state: options.state ?? false,
    clock,
    logger,
    store: options.store ?? loaded.config.limits.store,
    storeDown: loaded.config.limits.storeDown,
    project: loaded.config.project,
  });
  const requestLog = createRequestLogger({
    format: options.log ?? 'off',
    stream: options.logStream ?? process.stdout,
    color: options.color ?? false,
  });
  const handler = createRequestHandler({
    holder,
    limits: limits.gate,
    get failures() {
      return failures;
    },
    requestLog,
    clock,
    logger,
  });

  const server = createServer({ ...HTTP_SERVER_OPTIONS, ...options.httpTimeouts }, handler);
  server.on('clientError', answerClientError);
  server.on('connect', answerConnect);
  // Node keeps only the first 1,000 header fields by default and drops the rest silently, so a key
  // sent later was never seen. Keep them all: maxHeaderSize (16 KiB, 431 beyond) bounds the block.
  server.maxHeadersCount = 0;
  // An Expect other than 100-continue: answer the request as usual, instead of Node's bare 417.
  server.on('checkExpectation', handler);
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  const host = options.host ?? loaded.config.server.host;
  try {
    await listen(server, options.port ?? loaded.config.server.port, host);
  } catch (err) {
    await limits.close();
    throw err;
  }
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const url = formatUrl(host, port);
  const own = options.ownPort ? await import('./http/own-port.js').then((m) => m.listenOwnPort(handler)) : undefined;
  // Reloads run one at a time, in order, so an older read never replaces a newer one.
  let reloads: Promise<unknown> = Promise.resolve();
  function reload(): Promise<ReloadResult> {
    const run = reloads.then(reloadNow, reloadNow);
    reloads = run.catch(() => {});
    return run;
  }

  async function reloadNow(): Promise<ReloadResult> {
    if (file === undefined) return { changed: false, issues: [] };
    // Read once: the same bytes decide whether anything changed and, when something did, are parsed.
    const read = await readConfigFile(file);
    if (read.ok && servesBytes(holder.current, read.bytes)) return { changed: false, issues: [] };
    const next = read.ok ? await parseConfig(read.bytes, file) : read;
    if (!next.ok) {
      logger.warn(`config not reloaded, still serving the last good one:\n${next.issues.map(formatIssue).join('\n')}`);
      return { changed: false, issues: next.issues };
    }
    let compiled: CompiledConfig;
    try {
      compiled = await compileConfig(next.config, holder.current);
    } catch (err) {
      logger.warn(`config not reloaded, still serving the last good one: ${(err as Error).message}`);
      return { changed: false, issues: [] };
    }
    const prev = holder.current;
    if (prev.config.revision === next.config.revision && sameBodies(prev, compiled)) return { changed: false, issues: [] };
    if (options.seed === undefined && next.config.seed !== prev.config.seed) failures = createFailureSource(next.config.seed);
    holder.current = compiled;
    onReload?.(prev.config, compiled.config);
    return { changed: true, issues: [] };
  }

  let onReload: ((prev: Config, next: Config) => void) | undefined;
  const watching = options.watch === true && file !== undefined;
  const stopWatching = watching ? await startWatching() : undefined;
  // A change made between loading and the watcher being ready would go unseen: look once more.
  if (watching) await reload();
  // Only now register: rotate-key finds running servers here and waits until they serve the new
  // key, so a registered server must already be watching.
  const unregister = file === undefined ? undefined : await registerServer(file, { url: own?.url ?? url, watch: watching }).catch((err: Error) => {
    logger.warn(`could not register this server for rotate-key under .mockapi/: ${err.message}`);
    return undefined;
  });
  // Removes the entry even on process.exit (a second Ctrl-C); listServers also drops dead pids.
  const unregisterOnExit = () => unregister?.sync();
  process.once('exit', unregisterOnExit);

  async function startWatching(): Promise<() => Promise<void>> {
    const { watchConfig, watchUsageState } = await import('./watch/watch.js');
    const { describeConfigChange } = await import('./config/diff.js');
    onReload = (prev, next) => {
      logger.info(describeConfigChange(prev, next));
      if (next.server.port !== prev.server.port || next.server.host !== prev.server.host) {
        logger.warn('server.port or server.host changed: restart mockapi to listen on the new address');
      }
      watcher.setExtraFiles(holder.current.bodyFiles);
    };
    const watcher = watchConfig({
      file: file as string,
      extraFiles: holder.current.bodyFiles,
      onChange: () => void reload(),
      onError: (err) => logger.warn(`file watcher: ${err.message}`),
    });
    const usageWatcher = await watchUsageState(limits.usage, logger);
    await Promise.all([watcher.ready, usageWatcher?.ready]);
    return async () => {
      await Promise.all([watcher.close(), usageWatcher?.close()]);
    };
  }

  let closing: Promise<void> | undefined;
  async function close(): Promise<void> {
    closing ??= (async () => {
      const stopped = new Promise<void>((done) => server.close(() => done()));
      server.closeIdleConnections();
      // Sockets that become idle after their in-flight request get closed too.
      for (const socket of sockets) socket.once('drain', () => server.closeIdleConnections());
      const idleTimer = setInterval(() => server.closeIdleConnections(), 50);
      await stopped;
      clearInterval(idleTimer);
      await own?.close();
      await stopWatching?.();
      await unregister?.();
      process.removeListener('exit', unregisterOnExit);
      await limits.close();
      await requestLog.close();
    })();
    return closing;
  }

  return {
    url,
    port,
    get config() {
      return holder.current.config;
    },
    close,
    reload,
  };
}
