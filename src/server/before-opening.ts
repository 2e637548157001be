// What a server's start does once it listens and before it opens its gate: watch the served files,
// register for rotate-key, read the config once more, and join the fleet. From the first answer on,
// the server is registered and watching, so a rotation reaches it.
import type { Fleet } from '../fleet/index.js';
import { alikeLines, type Logger } from '../logger.js';
import { registerServer, type Unregister } from '../state/registry.js';
import type { StartContext } from './context.js';
import type { ServerParts } from './parts.js';

/** `address`: where this server answers (a worker's own port, else its HTTP front). */
export async function beforeOpening(ctx: StartContext, p: ServerParts, address: string): Promise<void> {
  const { file } = ctx.config;
  const watching = await watchFiles(ctx, p);
  await registerEntry(ctx, address, watching);
  // Then read the file once more, after both: a change made since loading (before the watches were
  // ready) would go unseen otherwise, and a rotate-key that listed the registry before this entry was
  // there (and so waited for nobody) wrote before this read — this server answers with its key.
  if (file !== undefined) await p.runtime.reload();
  // A host of a fleet: registered, with the fleet's clock, stubs and scenario states, before its first answer.
  if (p.fleet !== undefined) await joinFleet(ctx, p, p.fleet, address);
}

/** Watches the config file and what it names, with `watch`; says whether it does. */
async function watchFiles(ctx: StartContext, p: ServerParts): Promise<boolean> {
  const { options, logger } = ctx;
  const { file } = ctx.config;
  const watching = options.watch === true && file !== undefined;
  if (watching) {
    // Loaded only when watching: a start without watching does not load the watcher or the config diff.
    const { watchServedFiles } = await import('../watch/served-files.js');
    const watch = await watchServedFiles(file, p.runtime, p.limits.usage, logger);
    ctx.stops.push(() => watch.close());
  }
  return watching;
}

async function registerEntry(ctx: StartContext, address: string, watching: boolean): Promise<void> {
  const { logger } = ctx;
  const { file } = ctx.config;
  // Register once watching, before answering anything: rotate-key finds running servers here and
  // waits until they serve the new key, so a registered server must already be watching.
  const unregister = file === undefined ? undefined : await register(file, address, watching, logger);
  // Removes the entry even on process.exit (a second Ctrl-C); listServers also drops dead pids.
  const unregisterOnExit = () => unregister?.sync();
  process.once('exit', unregisterOnExit);
  // First at a stop: a server that takes no new connections cannot confirm a rotation, so rotate-key should not wait for it.
  ctx.stops.push(async () => {
    await unregister?.();
    process.removeListener('exit', unregisterOnExit);
  });
}

/** Records the server under `.mockapi/servers/` for rotate-key; a failure is a warning, not a stop. */
function register(file: string, url: string, watch: boolean, logger: Logger): Promise<Unregister | undefined> {
  return registerServer(file, { url, watch }).catch((err: Error) => {
    logger.warn(`could not register this server for rotate-key under .mockapi/: ${err.message}`);
    return undefined;
  });
}

async function joinFleet(ctx: StartContext, p: ServerParts, fleet: Fleet, address: string): Promise<void> {
  const { options, logger } = ctx;
  const { runtime } = p;
  const clockTaken = await fleet.join({
    address,
    revision: runtime.holder.current.config.revision,
    virtualClock: p.control.virtualClock,
  });
  if (clockTaken !== undefined) options.onFleetClock?.(clockTaken);
  // The fleet's sessions, before the first answer; again each time Redis is back.
  const takeSessions = (): Promise<void> =>
    p.sessions.registry
      .catchUp()
      .catch((err: Error) => logger.warn(`fleet: could not read the sessions: ${err.message}`));
  await takeSessions();
  fleet.onBack(() => void takeSessions());
  runtime.onSwap((prev, next) => {
    fleet.configChanged(next.revision);
    if (options.fleet === undefined && prev.fleet?.store !== next.fleet?.store)
      alikeLines(logger).warn('fleet.store changed: this server keeps the Redis it started with until it is restarted');
  });
}
