import type { FSWatcher } from 'node:fs';
import { resolve } from 'node:path';
import type { Logger } from './logger.js';
import type { UsageStore } from './state.js';
import { signatureOf, watchInode } from './watch/file-watch.js';

export interface WatchConfigOptions {
  /** The config file. */
  file: string;
  /** Further files whose changes count as a config change (the config's bodyFiles). */
  extraFiles?: string[];
  /** Quiet time after the last event before `onChange` fires. Default 50 ms. */
  debounceMs?: number;
  /** How often every file is checked with `stat`, whatever the native events say. Default 250 ms. */
  pollMs?: number;
  /** Use the platform's file events (default true). False: rely on the periodic check alone. */
  nativeEvents?: boolean;
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
  /** Resolves once every file is watched and checked: changes made after it are seen. */
  ready: Promise<void>;
}

/** Default debounce: short, because `rotate-key` waits for the reload it triggers. */
export const DEFAULT_DEBOUNCE_MS = 50;
/** Default period of the stat check: with the debounce and a reload, well within SPEC 5.5's second. */
export const DEFAULT_POLL_MS = 250;
/** Under a continuous stream of events, still signal at least this often. */
const MAX_WAIT_FACTOR = 10;

/**
 * Watches the config file (and extra files) and calls `onChange` once per burst of changes. It
 * cannot silently stop: two mechanisms, each enough to recover from what the other misses.
 *
 * - Native events, per file. A native watch follows an inode, not a name: once a save by rename
 *   (`sed -i`, formatters, `git checkout`, editors' safe write) puts a new inode under the name,
 *   the old watch hears nothing more. So every burst ends by watching each name again, before
 *   `onChange` runs: whatever the caller then reads, a later change reaches the new watch. (chokidar
 *   re-watched only from a listener throttled to once per 5 ms, so a second rename within 5 ms left
 *   it on a dead inode for good.) Files, not folders: a log file written beside the config must
 *   not wake the watcher (watching the folder cost a third of throughput, see BENCHMARKS.md).
 * - A `stat` of every file every `pollMs`, compared with what was seen when the last burst fired
 *   (device, inode, size, times). Any difference fires. This catches what no native event reports:
 *   a file re-created after a delete, a folder replaced, a network share without events.
 *
 * Every event kind counts; a deleted file is reported like a change, and the caller's re-read fails
 * and keeps the last good config. The watcher only signals: it never reads the files, so it cannot
 * race the caller's reload.
 */
export function watchConfig(opts: WatchConfigOptions): ConfigWatcher {
  const debounceMs = opts.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  const configFile = resolve(opts.file);
  let wanted = fileSet(configFile, opts.extraFiles ?? []);
  const watches = new Map<string, FSWatcher | undefined>();
  /** Each file's signature as last seen, by the last burst or the periodic check. */
  const seen = new Map<string, string>();
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let firstEventAt: number | undefined;

  const report = (err: unknown): void => {
    opts.onError?.(err instanceof Error ? err : new Error(String(err)));
  };

  const schedule = (): void => {
    if (closed) return;
    const now = Date.now();
    firstEventAt ??= now;
    if (timer) clearTimeout(timer);
    const maxWait = debounceMs * MAX_WAIT_FACTOR;
    timer = setTimeout(() => void fire(), Math.max(0, Math.min(debounceMs, firstEventAt + maxWait - now)));
  };

  /** Watches the inode `file` names now; the new watch starts before the old one stops. */
  const arm = (file: string): void => {
    if (opts.nativeEvents === false) return;
    const old = watches.get(file);
    watches.set(file, watchInode(file, schedule, report));
    old?.close();
  };

  const disarm = (file: string): void => {
    watches.get(file)?.close();
    watches.delete(file);
  };

  const record = async (files: Iterable<string>): Promise<void> => {
    await Promise.all([...files].map(async (file) => seen.set(file, await signatureOf(file))));
  };

  const fire = async (): Promise<void> => {
    timer = undefined;
    firstEventAt = undefined;
    if (closed) return;
    // Watch again first, record second, signal last: any change after this point either reaches a
    // new watch or differs from what was recorded; the caller reads bytes at least this new.
    for (const file of wanted) arm(file);
    await record(wanted);
    if (closed) return;
    try {
      opts.onChange();
    } catch (err) {
      report(err);
    }
  };

  let checking = false;
  const check = async (): Promise<void> => {
    if (checking || closed) return;
    checking = true;
    try {
      const files = [...wanted];
      const now = await Promise.all(files.map(signatureOf));
      if (!closed && files.some((file, i) => seen.has(file) && seen.get(file) !== now[i])) schedule();
    } finally {
      checking = false;
    }
  };
  const poll = setInterval(() => void check(), opts.pollMs ?? DEFAULT_POLL_MS);
  poll.unref();

  for (const file of wanted) arm(file);
  let ready = record(wanted);

  return {
    get ready() {
      return ready;
    },
    setExtraFiles(files: string[]): void {
      if (closed) return;
      const next = fileSet(configFile, files);
      const added = [...next].filter((file) => !wanted.has(file));
      for (const file of wanted) {
        if (!next.has(file)) {
          disarm(file);
          seen.delete(file);
        }
      }
      wanted = next;
      for (const file of added) arm(file);
      ready = record(added);
    },
    async close(): Promise<void> {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      clearInterval(poll);
      for (const file of [...watches.keys()]) disarm(file);
    },
  };
}

function fileSet(configFile: string, extra: string[]): Set<string> {
  return new Set([configFile, ...extra.map((f) => resolve(f))]);
}

/**
 * Watches the usage state file of `store`, so `mockapi usage --reset` (or an edit) reaches a
 * running server at once instead of being written over. The file (and its folder) may not exist
 * yet: the periodic check sees it appear. Undefined when usage is kept in memory.
 */
export async function watchUsageState(store: UsageStore, logger: Logger): Promise<ConfigWatcher | undefined> {
  const stateFile = store.file;
  if (stateFile === undefined) return undefined;
  return watchConfig({
    file: stateFile,
    onChange: () => void store.reconcile().catch((err: Error) => logger.warn(`usage state: ${err.message}`)),
    onError: (err) => logger.warn(`usage state watcher: ${err.message}`),
  });
}
