import { resolve } from 'node:path';
import type { Logger } from '../logger.js';
import type { UsageStore } from '../state/usage-store.js';
import { MISSING, signatureOf, watchFileName, type FileWatch } from './file-watch.js';

export interface WatchConfigOptions {
  /** The config file. */
  file: string;
  /** Further files whose changes count as a config change (the config's bodyFiles). */
  extraFiles?: string[];
  /** Quiet time after the last event before `onChange` fires. Default 50 ms. */
  debounceMs?: number;
  /** How often every file is checked with `stat`, whatever the native events say. Default 250 ms. */
  pollMs?: number;
  /** Use chokidar's file events (default true). False: rely on the periodic check alone (tests of the net). */
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
/** Default period of the stat check: with the debounce and a reload, well within the second a save may take to be served. */
export const DEFAULT_POLL_MS = 250;
/** Under a continuous stream of events, still signal at least this often. */
const MAX_WAIT_FACTOR = 10;

/**
 * Watches the config file (and extra files) and calls `onChange` once per burst of changes. It
 * cannot silently stop: two mechanisms, each enough to recover from what the other misses.
 *
 * - chokidar, one watcher per file, is the source of events: writes in place, editors' atomic
 *   saves, delete and re-create, the platforms' quirks, `CHOKIDAR_USEPOLLING=1` where no events
 *   arrive. Files, not folders: a log file written beside the config must not wake the watcher
 *   (watching the folder cost a third of throughput, see BENCHMARKS.md).
 * - But a native watch follows an inode, not a name, and chokidar moves its watch to the new inode
 *   after a save by rename from a listener that runs at most once per 5 ms: two rename-saves within
 *   5 ms (`sed -i` twice, formatters, `git checkout`) left it on a deleted inode, deaf for good.
 *   So every burst first re-arms each file it touched (a new chokidar watcher, awaited until it
 *   watches what the name points to now), records each file's signature, and only then calls
 *   `onChange`: whatever the caller then reads, a later save reaches the new watch, or differs
 *   from the recorded signature.
 * - Every `pollMs`, each file's signature (device, inode, size, times) is compared with the one the
 *   last burst recorded. A difference is a change chokidar did not report (a file re-created where
 *   no event reaches, a network share): it starts a burst, which re-arms that file too.
 *
 * Every event kind counts; a deleted file is reported like a change, and the caller's re-read fails
 * and keeps the last good config. The watcher only signals: it never reads the files, so it cannot
 * race the caller's reload.
 */
export function watchConfig(opts: WatchConfigOptions): ConfigWatcher {
  const debounceMs = opts.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  const configFile = resolve(opts.file);
  let wanted = fileSet(configFile, opts.extraFiles ?? []);
  const watches = new Map<string, FileWatch>();
  /** Each file's signature when the last burst fired (or when watching began). */
  const seen = new Map<string, string>();
  /** Files chokidar reported since the last burst began. */
  const touched = new Set<string>();
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let firstEventAt: number | undefined;
  /** Bursts run one after the other, so two never re-arm the same file at once. */
  let bursts: Promise<void> = Promise.resolve();
  /** Bursts queued or running; how many times `seen` was recorded. */
  let firing = 0;
  let recorded = 0;
  /** A file found empty or missing, held back once (see `burst`): which, its signature then, and the look again. */
  let held: { file: string; signature: string; timer: NodeJS.Timeout } | undefined;

  const report = (err: unknown): void => {
    opts.onError?.(err instanceof Error ? err : new Error(String(err)));
  };

  const schedule = (): void => {
    if (closed) return;
    const now = Date.now();
    firstEventAt ??= now;
    if (timer) clearTimeout(timer);
    const maxWait = debounceMs * MAX_WAIT_FACTOR;
    timer = setTimeout(
      () => {
        timer = undefined;
        firstEventAt = undefined;
        firing++;
        bursts = bursts
          .then(burst)
          .catch(report)
          .finally(() => firing--);
      },
      Math.max(0, Math.min(debounceMs, firstEventAt + maxWait - now)),
    );
  };

  /** Watches the name `file` afresh; resolves once the new watch is in place. */
  const arm = (file: string): Promise<void> => {
    // Not for a file dropped (setExtraFiles, close) while a burst was looking at it.
    if (opts.nativeEvents === false || closed || !wanted.has(file)) return Promise.resolve();
    watches.get(file)?.close(); // first: a watcher started while the old one is open would share it
    const fresh = watchFileName(
      file,
      () => {
        touched.add(file);
        schedule();
      },
      report,
    );
    watches.set(file, fresh);
    return fresh.ready;
  };

  const disarm = (file: string): void => {
    watches.get(file)?.close();
    watches.delete(file);
  };

  const signatures = async (files: string[]): Promise<string[]> => Promise.all(files.map(signatureOf));
  const record = async (files: string[]): Promise<void> => {
    const now = await signatures(files);
    files.forEach((file, i) => seen.set(file, now[i] as string));
    recorded++;
  };

  const burst = async (): Promise<void> => {
    if (closed) return;
    // Re-arm every file reported or found changed since the last burst, record, then signal: any
    // change after this point reaches a new watch or differs from what was recorded, and the caller
    // reads bytes at least this new.
    // Reports arriving from here on belong to the next burst, which their events have scheduled.
    // The reported files' watchers stop now: their late echoes of this burst must not start another.
    const reported = new Set(touched);
    touched.clear();
    for (const file of reported) watches.get(file)?.close();
    const files = [...wanted];
    const before = await signatures(files);
    const stale = files.filter((file, i) => reported.has(file) || seen.get(file) !== before[i]);
    await Promise.all(stale.map(arm));
    await record(files);
    if (closed || holdBack(stale)) return;
    try {
      opts.onChange();
    } catch (err) {
      report(err);
    }
  };

  /**
   * A file found empty or missing is, most often, a save on its way: a writer that truncated the
   * file and has not written yet (`fs.writeFile`, `>` in a shell), or deleted it to create it again.
   * Read then, it would be reported as an empty or missing config just before the real one. Such a
   * state of a file this burst found changed is held back once, for `debounceMs × 10`: the write
   * that follows starts a burst of its own (and ends the hold); a file still empty or missing then
   * is reported.
   */
  const holdBack = (changed: string[]): boolean => {
    const file = changed.find((f) => nothingToRead(seen.get(f)));
    const signature = file === undefined ? undefined : seen.get(file);
    const again = held !== undefined && held.file === file && held.signature === signature;
    if (held !== undefined) clearTimeout(held.timer);
    held = undefined;
    if (file === undefined || signature === undefined || again) return false;
    const timer = setTimeout(() => {
      held = { file, signature, timer }; // kept: the burst this starts sees the same state, and reports it
      touched.add(file);
      schedule();
    }, debounceMs * MAX_WAIT_FACTOR);
    timer.unref();
    held = { file, signature, timer };
    return true;
  };

  let checking = false;
  const check = async (): Promise<void> => {
    // A burst on its way stats every file itself; and stats taken before a burst recorded newer
    // ones are stale: compared with them, they would start a second burst for the same change.
    const busy = (): boolean => closed || timer !== undefined || firing > 0;
    if (checking || busy()) return;
    checking = true;
    try {
      const files = [...wanted];
      const at = recorded;
      const now = await signatures(files);
      if (busy() || recorded !== at) return;
      if (files.some((file, i) => seen.has(file) && seen.get(file) !== now[i])) schedule();
    } finally {
      checking = false;
    }
  };
  const poll = setInterval(() => void check(), opts.pollMs ?? DEFAULT_POLL_MS);
  poll.unref();

  /** Watches `files` and records their signatures: changes made after it resolves are seen. */
  const begin = async (files: string[]): Promise<void> => {
    await Promise.all(files.map(arm));
    await record(files);
  };
  let ready = begin([...wanted]);

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
      ready = begin(added);
    },
    async close(): Promise<void> {
      closed = true;
      if (timer) clearTimeout(timer);
      if (held !== undefined) clearTimeout(held.timer);
      timer = undefined;
      clearInterval(poll);
      for (const file of [...watches.keys()]) disarm(file);
    },
  };
}

/** True for the signature of a file that is missing or holds no byte (see `signatureOf`). */
function nothingToRead(signature: string | undefined): boolean {
  return signature === MISSING || (signature !== undefined && signature.split(':')[2] === '0');
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
