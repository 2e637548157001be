import cluster, { type Worker } from 'node:cluster';
import { resolve } from 'node:path';
import { formatIssue, loadConfig } from '../../config/load.js';
import { createPrimaryHub } from '../../workers/hub-primary.js';
import { createResourceHost, type ResourceHost } from '../../workers/resource-host.js';
import type { Config } from '../../config/types.js';
import type { Logger } from '../../logger.js';
import { storeNeed } from '../../workers/needs-store.js';
import { EPOCH_ENV, monotonicMicros, SLOT_ENV } from '../../workers/ids.js';
import { createStubPrimary } from '../../stubs/stub-hub.js';
import { mergeClients, summarize } from '../../control/early-retries.js';
import { guardHandoffs } from './handoff-guard.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type CommandIO } from './io.js';
import { httpsSettings } from '../../tls/settings.js';
import { prepareHttps } from '../../tls/setup.js';
import { TlsSetupError } from '../../tls/tls-error.js';
import { httpsFromFlags, readyLine, type AnnounceReady, type ServeOptions, type StopSignal } from './serve.js';

/** What a worker tells the primary once it answers requests. */
export interface WorkerReady {
  type: 'mockapi:ready';
  url: string;
  endpoints: number;
  /** The shared HTTPS port's URL, when HTTPS is on. */
  httpsUrl?: string;
}

/** A capability's own messages between the workers and the primary (`record --workers`: the recording, see record/workers-recording.ts). */
export interface PrimaryPart {
  /** Handles a worker's message; false when it is not this part's. */
  receive(worker: Worker, message: unknown): boolean;
  /** A worker that answers requests. */
  join(worker: Worker): void;
  /** A worker that is gone. */
  leave(worker: Worker): void;
}

/** What the primary tells a worker: stop as on SIGTERM. */
export const STOP_MESSAGE = 'mockapi:stop';

function isReady(message: unknown): message is WorkerReady {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'mockapi:ready';
}

/**
 * The primary of `serve --workers <n>`: checks the config, forks n workers that run
 * `serve` on one shared port (node:cluster hands connections round-robin), prints the ready line
 * once all of them answer, and on SIGINT/SIGTERM stops each gracefully (an IPC message, not a
 * signal: a terminal's Ctrl-C already reached them, and a second signal means "now"). A worker that
 * dies while serving is replaced. Each worker watches the config and registers its own loopback
 * port, so hot reload and rotate-key confirmation cover every worker.
 */
export async function runPrimary(
  opts: ServeOptions & { workers: number },
  io: CommandIO,
  untilStopped: StopSignal,
  part?: PrimaryPart,
): Promise<number> {
  if (opts.clock !== undefined) {
    // Each worker would run a clock of its own, and a shared store's window reads Redis's clock anyway.
    io.err(
      'mockapi: --clock cannot be combined with --workers: a virtual clock belongs to one process; run one process to move time',
    );
    return EXIT_USAGE;
  }
  // Each worker reads the OpenAPI description when a request first needs it (as one process does): here only its file is looked at.
  const loaded = await loadConfig(resolve(opts.config), 'later');
  if (!loaded.ok) {
    for (const issue of loaded.issues) io.err(formatIssue(issue));
    io.err(
      `mockapi: ${loaded.issues.length} problem${loaded.issues.length === 1 ? '' : 's'} in ${opts.config}; not starting`,
    );
    return EXIT_FAILURE;
  }
  // Each worker would keep limits of its own (a worker's reload refuses the same: see needs-store.ts).
  const need = storeNeed(loaded.config);
  if (need !== undefined && sharedStoreUrl(opts, loaded.config) === undefined) {
    io.err(`mockapi: ${need.why}`);
    io.err(`  ${need.remedy}`);
    return EXIT_USAGE;
  }

  // HTTPS: the CA is made (or the certificate checked) once here, before the workers start and read it.
  const https = httpsSettings(httpsFromFlags(opts), loaded.config.server.https);
  if (https !== undefined) {
    try {
      // A fleet's hosts present certificates of one CA: the fleet's, taken before the certificate is made.
      const fleetUrl = opts.fleet ?? (loaded.config.fleet?.url || undefined);
      if (fleetUrl !== undefined && https.cert === undefined && https.key === undefined) {
        const warn = (message: string) => io.err(`mockapi warning: ${message}`);
        await (
          await import('../../fleet/ca.js')
        ).shareCaOnce(fleetUrl, loaded.config.project, loaded.config.dir, { info: () => {}, warn, error: warn });
      }
      await prepareHttps(https, { configDir: loaded.config.dir, bindHost: opts.host ?? loaded.config.server.host });
    } catch (err) {
      if (!(err instanceof TlsSetupError)) throw err;
      io.err(`mockapi: HTTPS: ${err.message}; not starting`);
      return EXIT_FAILURE;
    }
  }

  let stopping = false;
  const ready = new Map<Worker, WorkerReady>();
  // The journal and the admin API of every worker meet here (see hub-primary.ts).
  const hub = createPrimaryHub();
  // The run-time stubs of every worker, and the counts of stubs with `times` (see stub-hub.ts).
  const stubs = createStubPrimary();
  // Without a shared store, the objects of `resources:` are kept here for every worker (see resource-host.ts);
  // `resources.persist`'s file is read before they start and written once they all stopped.
  const resourceHost = sharedStoreUrl(opts, loaded.config) === undefined ? createResourceHost() : undefined;
  const warn = {
    info: () => {},
    warn: (m: string) => io.err(`mockapi warning: ${m}`),
    error: (m: string) => io.err(m),
  };
  if (resourceHost !== undefined && loaded.config.resources?.persist === true)
    await resourceHost.load(loaded.config.dir, warn);
  let failed: (() => void) | undefined;
  /** Every worker said it was ready once: the server serves. */
  let serving = false;
  const allReady = new Promise<boolean>((done) => {
    failed = () => done(false);
    cluster.on('message', (worker, message) => {
      if (isStubReset(message)) stubs.clear(); // the reset reaches the workers through the journal's hub
      if (
        part?.receive(worker, message) === true ||
        resourceHost?.receive(worker, message) === true ||
        stubs.receive(worker, message) ||
        hub.receive(worker, message) ||
        !isReady(message)
      )
        return;
      ready.set(worker, message);
      hub.join(worker);
      part?.join(worker);
      stubs.join(worker);
      if (ready.size === opts.workers) {
        serving = true;
        done(true);
      }
    });
  });
  // Each worker numbers its own journal entries (workers/ids.ts): by the time since this
  // epoch, and its slot, which a replacement takes over.
  const epoch = monotonicMicros();
  const slots = new Map<Worker, number>();
  const fork = (slot: number): void => {
    const worker = cluster.fork({ [SLOT_ENV]: String(slot), [EPOCH_ENV]: String(epoch) });
    guardHandoffs(worker); // a connection handed to a worker that dies is handed to another (see handoff-guard.ts)
    slots.set(worker, slot);
  };
  cluster.on('exit', (worker, code, signal) => {
    hub.leave(worker);
    stubs.leave(worker);
    part?.leave(worker);
    const served = ready.delete(worker);
    const slot = slots.get(worker) ?? 0;
    slots.delete(worker);
    if (stopping) return;
    // One that exits by itself before it serves could not start (it said why on stderr): the start
    // fails, or after it the slot stays empty rather than failing again in a loop. One killed by a
    // signal before it said it was ready (a replacement killed while it starts) is replaced like any other.
    if (!served && (signal === null || !serving)) return failed?.();
    io.err(`mockapi: worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
    fork(slot);
  });
  for (let i = 0; i < opts.workers; i++) fork(i);

  const stopAll = async (): Promise<boolean> => {
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    const codes = await Promise.all(
      workers.map(
        (worker) =>
          new Promise<number | null>((done) => {
            // Done once it exited and its channel ended: the clients it sent as it stopped were read before that end.
            const disconnected = worker.isConnected()
              ? new Promise((gone) => worker.once('disconnect', gone))
              : undefined;
            worker.once('exit', (code, signal) => {
              // Said on stderr, so a stop that exits 1 tells which worker and why.
              if (code !== 0)
                io.err(`mockapi: worker ${worker.process.pid} exited with ${signal ?? code} while stopping`);
              void Promise.resolve(disconnected).then(() => done(code));
            });
            // A channel closing meanwhile fails the send in its callback, not as an 'error' event
            // that would end the primary; that worker is exiting anyway.
            if (worker.isConnected()) worker.send(STOP_MESSAGE, () => {});
            else worker.process.kill('SIGTERM');
          }),
      ),
    );
    return codes.every((code) => code === 0);
  };

  const stopped = untilStopped();
  const started = await Promise.race([allReady, stopped.then(() => false)]);
  if (!started) {
    await stopAll();
    return EXIT_FAILURE;
  }
  const first = [...ready.values()][0]!;
  io.out(
    readyLine(
      first.url,
      first.httpsUrl,
      `${first.endpoints} endpoint${first.endpoints === 1 ? '' : 's'}, ${opts.workers} worker${opts.workers === 1 ? '' : 's'}`,
    ),
  );
  io.out(`inspector: ${first.url}/__mockapi/`);
  const signal = await stopped;
  io.err(`mockapi ${signal} received, stopping ${opts.workers} worker${opts.workers === 1 ? '' : 's'}…`);
  const ok = await stopAll();
  if (resourceHost !== undefined) await saveResourcesAtStop(opts.config, loaded.config, resourceHost, warn);
  // The early-retry stop summary, once for the whole server: each worker sent its clients as it stopped.
  const summary = summarize(mergeClients(hub.finals()));
  if (summary !== undefined) io.err(`mockapi ${summary}`);
  return ok ? EXIT_OK : EXIT_FAILURE;
}

/** The shared store (Redis) the workers keep their limits and objects in, when one is set. */
function sharedStoreUrl(opts: ServeOptions, config: Config): string | undefined {
  return opts.store ?? config.limits.store ?? opts.fleet ?? (config.fleet?.url || undefined);
}

/**
 * `resources.persist` of the config served last (read again: a reload may have turned it on or
 * off; the one read at start when it no longer loads): the primary writes the file, as one process does at stop.
 */
async function saveResourcesAtStop(file: string, first: Config, host: ResourceHost, logger: Logger): Promise<void> {
  const again = await loadConfig(resolve(file), 'later').catch(() => undefined);
  const config = again?.ok === true ? again.config : first;
  if (config.resources?.persist === true) await host.save(config.dir, logger);
}

/** A worker's `POST /__mockapi/reset` that removes the stubs (part `stubs`, absent = true), on its way to the other workers. */
function isStubReset(message: unknown): boolean {
  const m = message as { type?: unknown; op?: { op?: unknown; parts?: { stubs?: unknown } } } | null;
  return (
    typeof m === 'object' &&
    m !== null &&
    m.type === 'mockapi:call' &&
    m.op?.op === 'reset' &&
    m.op.parts?.stubs !== false
  );
}

/** In a worker: resolves on the primary's stop message as well as on a signal. */
export function workerStopSignal(signal: StopSignal): StopSignal {
  return () =>
    Promise.race([
      signal(),
      new Promise<string>((done) => {
        const onMessage = (message: unknown) => {
          if (message !== STOP_MESSAGE) return;
          process.off('message', onMessage);
          done('SIGTERM');
        };
        process.on('message', onMessage);
      }),
    ]);
}

/**
 * `serve --workers <n>`: the primary (see {@link runPrimary}); or, in a worker (node:cluster runs the
 * same command line again), `serveOne` on the shared port, announcing itself to the primary.
 */
export async function serveWithWorkers(
  opts: ServeOptions & { workers: number },
  io: CommandIO,
  untilStopped: StopSignal,
  serveOne: (opts: ServeOptions, io: CommandIO, untilStopped: StopSignal, worker: AnnounceReady) => Promise<number>,
  part?: PrimaryPart,
): Promise<number> {
  if (cluster.isPrimary) return runPrimary(opts, io, untilStopped, part);
  const announce: AnnounceReady = (url, endpoints, httpsUrl) =>
    process.send?.({
      type: 'mockapi:ready',
      url,
      endpoints,
      ...(httpsUrl === undefined ? {} : { httpsUrl }),
    } satisfies WorkerReady);
  try {
    return await serveOne({ ...opts, workers: undefined }, io, workerStopSignal(untilStopped), announce);
  } finally {
    // The IPC channel to the primary would keep this process alive.
    if (process.connected) process.disconnect();
  }
}
