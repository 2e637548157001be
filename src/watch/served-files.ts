import type { ConfigRuntime } from '../answer/config-runtime.js';
import { describeConfigChange } from '../config/diff.js';
import { alikeLines, type Logger } from '../logger.js';
import type { UsageStore } from '../state/usage-store.js';
import { watchConfig, watchUsageState } from './watch.js';

/** The files a running server watches; `close` stops every watch. */
export interface ServedFilesWatch {
  close(): Promise<void>;
}

/**
 * Watches what a server serves from disk: the config file and its body files (a change reloads
 * the config) and the usage state file (a change outside this server, such as `usage --reset`,
 * reaches it at once). Resolves once every watch is ready, so no later change goes unseen; the
 * caller reloads once more after it, for a change made between loading and now.
 */
export async function watchServedFiles(
  file: string,
  runtime: ConfigRuntime,
  usage: UsageStore,
  given: Logger,
): Promise<ServedFilesWatch> {
  // Every worker of `serve --workers` watches the same files and reloads alike: one of them says so.
  const logger = alikeLines(given);
  const watcher = watchConfig({
    file,
    extraFiles: runtime.holder.current.bodyFiles,
    onChange: () => void runtime.reload(),
    // (its own watchers' errors: each worker says its own, e.g. the watch limit one of them hit)
    onError: (err) => given.warn(`file watcher: ${err.message}`),
  });
  runtime.onSwap((prev, next) => {
    logger.info(describeConfigChange(prev, next));
    if (next.server.port !== prev.server.port || next.server.host !== prev.server.host) {
      logger.warn('server.port or server.host changed: restart mockapi to listen on the new address');
    }
    // The HTTPS listener and its certificate are made at start.
    if (JSON.stringify(next.server.https) !== JSON.stringify(prev.server.https))
      logger.warn('server.https changed: restart mockapi to serve HTTPS as configured');
    watcher.setExtraFiles(runtime.holder.current.bodyFiles);
  });
  const usageWatcher = await watchUsageState(usage, given);
  await Promise.all([watcher.ready, usageWatcher?.ready]);
  return {
    async close() {
      await Promise.all([watcher.close(), usageWatcher?.close()]);
    },
  };
}
