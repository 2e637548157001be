import { watch, type FSWatcher } from 'chokidar';
import { resolve } from 'node:path';
import type { Logger } from '../logger.js';
import { ensureStateDir } from '../state/state-file.js';
import type { UsageStore } from '../state/usage-store.js';

export interface WatchConfigOptions {
  /** The config file. */
  file: string;
  /** Further files whose changes count as a config change (the config's bodyFiles). */
  extraFiles?: string[];
  /** Quiet time after the last event before `onChange` fires. Default 50 ms. */
  debounceMs?: number;
  /** Called once per burst of changes. The caller re-reads, compares, validates and swaps. */
  onChange: () => void;
  /** Watcher errors (and exceptions thrown by `onChange`); they never stop the watcher. */
  onError?: (err: Error) => void;
}

export interface ConfigWatcher {
  /** Replaces the extra files (call after each successful reload with the new bodyFiles). */
  setExtraFiles(files: string[]): void;
  /** Stops watching; no `onChange` fires after it resolves. */
  close(): Promise<void>;
  /** Resolves once the initial scan is done: changes made after it are seen. */
  ready: Promise<void>;
}

/** Default debounce: short, because `rotate-key` waits for the reload it triggers. */
export const DEFAULT_DEBOUNCE_MS = 50;
/** Under a continuous stream of events, still signal at least this often. */
const MAX_WAIT_FACTOR = 10;

/**
 * Watches the config file (and extra files) and calls `onChange` once per burst of changes.
 *
 * We give chokidar the files themselves, with `atomic: true`. It watches each file and notices
 * the name coming back after an editor's atomic save (write a temporary file, rename it over the
 * target) or a delete and re-create, so every version of the name is seen. We used to watch the
 * parent folders filtered to these names, but chokidar re-reads a watched folder after every
 * event in it: a log file written beside the config (`mockapi serve > mock.log`) kept it busy
 * and cut throughput by a third. Every event kind (add, change, unlink) counts; a deleted file is
 * reported like a change, and the caller's re-read fails and keeps the last good config.
 *
 * No polling by default: inotify (Linux), FSEvents (macOS) and ReadDirectoryChangesW (Windows)
 * see these events at once and cost nothing while idle. Where native events do not arrive
 * (network shares, some Docker bind mounts) chokidar honours `CHOKIDAR_USEPOLLING=1`.
 *
 * The watcher only signals: it never reads the file, so it cannot race the caller's reload.
 */
export function watchConfig(opts: WatchConfigOptions): ConfigWatcher {
  const debounceMs = opts.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  const configFile = resolve(opts.file);
  let wanted = fileSet(configFile, opts.extraFiles ?? []);
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let firstEventAt: number | undefined;

  const report = (err: unknown): void => {
    opts.onError?.(err instanceof Error ? err : new Error(String(err)));
  };

  const fire = (): void => {
    timer = undefined;
    firstEventAt = undefined;
    if (closed) return;
    try {
      opts.onChange();
    } catch (err) {
      report(err);
    }
  };

  const schedule = (): void => {
    if (closed) return;
    const now = Date.now();
    firstEventAt ??= now;
    if (timer) clearTimeout(timer);
    const maxWait = debounceMs * MAX_WAIT_FACTOR;
    timer = setTimeout(fire, Math.max(0, Math.min(debounceMs, firstEventAt + maxWait - now)));
  };

  let watcher = startWatcher(wanted, schedule, report);
  let ready = readyOf(watcher);

  return {
    get ready() {
      return ready;
    },
    setExtraFiles(files: string[]): void {
      if (closed) return;
      const next = fileSet(configFile, files);
      if (sameSet(next, wanted)) return;
      wanted = next;
      // Rebuild rather than add/unwatch: chokidar decides per-file watches while it scans a
      // folder, so a file that was filtered out before would not get one. The new watcher starts
      // before the old one closes so no change falls in between; duplicates are debounced.
      const old = watcher;
      watcher = startWatcher(wanted, schedule, report);
      ready = readyOf(watcher);
      old.close().catch(report);
    },
    async close(): Promise<void> {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await watcher.close();
    },
  };
}

function startWatcher(files: Set<string>, onEvent: () => void, onError: (err: unknown) => void): FSWatcher {
  const watcher = watch([...files], { ignoreInitial: true, atomic: true });
  watcher.on('all', (_event, path) => {
    if (files.has(resolve(path))) onEvent();
  });
  watcher.on('error', onError);
  return watcher;
}

function readyOf(watcher: FSWatcher): Promise<void> {
  return new Promise((resolveReady) => watcher.once('ready', () => resolveReady()));
}

function fileSet(configFile: string, extra: string[]): Set<string> {
  return new Set([configFile, ...extra.map((f) => resolve(f))]);
}

function sameSet(a: Set<string>, b: Set<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}

/**
 * Watches the usage state file of `store`, so `mockapi usage --reset` (or an edit) reaches a
 * running server at once instead of being written over. chokidar sees a file appear only in a
 * folder that exists, so the folder is made now. Undefined when usage is kept in memory, or the
 * folder cannot be made; the store still re-reads the file before each write.
 */
export async function watchUsageState(store: UsageStore, logger: Logger): Promise<ConfigWatcher | undefined> {
  const stateFile = store.file;
  if (stateFile === undefined) return undefined;
  try {
    await ensureStateDir(stateFile);
  } catch (err) {
    logger.warn(`usage state: cannot create the folder of ${stateFile} (${(err as Error).message}); a reset made while this server runs is seen only at its next write`);
    return undefined;
  }
  return watchConfig({
    file: stateFile,
    onChange: () => void store.reconcile().catch((err: Error) => logger.warn(`usage state: ${err.message}`)),
    onError: (err) => logger.warn(`usage state watcher: ${err.message}`),
  });
}
