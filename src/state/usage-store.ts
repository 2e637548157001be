import { cleanupTempFiles, writeFileAtomic } from './atomic-write.js';
import { systemClock, type Clock } from '../clock.js';
import { silentLogger, type Logger } from '../logger.js';
import {
  monthOf,
  readStateFile,
  setStateAside,
  writeStateFile,
  type MonthlyUsage,
  type StateFileRead,
  type WriteFn,
} from './state-file.js';

/** The monthly request counter, persisted to a file or kept in memory. */
export interface UsageStore {
  /** The state file, or `undefined` when usage is kept in memory only. */
  readonly file: string | undefined;
  /** Requests counted in the month of `now` (0 once the month has changed). */
  count(now: number): number;
  /** Counts one request in the month of `now`; returns the new count. */
  increment(now: number): number;
  /** Sets the month of `now` back to 0. */
  reset(now: number): void;
  /**
   * Re-reads the file and, when someone else wrote a valid count there since this store last read
   * or wrote it (`mockapi usage --reset`, an edit), takes that count instead of its own. `flush`
   * does this before each write, so such a change is never written over.
   */
  reconcile(): Promise<void>;
  /**
   * `reconcile()` at most once a second, in the background. For a server refusing requests over
   * its quota: its count no longer changes, so it would never write, and so never re-read, the file.
   */
  reconcileSoon(now: number): void;
  /** Writes pending changes now (write errors are warned about, never thrown). */
  flush(): Promise<void>;
  /** Stops the flush timer and writes pending changes; counting still works in memory afterwards. */
  close(): Promise<void>;
}

export interface UsageStoreOptions {
  /** The state file (see `resolveStateFile`); `undefined` keeps usage in memory only. */
  file?: string;
  clock?: Clock;
  logger?: Logger;
  /** Longest time a change waits before it is written. Default 1000 ms. */
  flushIntervalMs?: number;
  /** How the file is written; default `writeFileAtomic`. Tests replace it to simulate a full disk. */
  write?: WriteFn;
}

/**
 * Loads usage from `options.file` and keeps it written. A missing file or one of a previous month
 * starts at 0; a corrupt one is reported and renamed to `state.json.corrupt-<time>`; an unreadable
 * one (or one that cannot be moved aside) is reported and left alone, and usage is kept in memory.
 */
export async function createUsageStore(options: UsageStoreOptions = {}): Promise<UsageStore> {
  const { clock = systemClock, logger = silentLogger } = options;
  const now = clock();
  let file = options.file;
  let usage: MonthlyUsage = { month: monthOf(now), requests: 0 };
  let read: StateFileRead | undefined;
  if (options.file !== undefined) {
    const target = options.file;
    await cleanupTempFiles(target);
    read = await readStateFile(target);
    if (read.status === 'ok' && read.usage.month === usage.month) usage = read.usage;
    if (read.status === 'unreadable') {
      logger.warn(`cannot read usage state ${target} (${read.reason}); usage is kept in memory only and the file is left as it is`);
      file = undefined;
    }
    if (read.status === 'corrupt') {
      try {
        const aside = await setStateAside(target, now);
        logger.warn(`usage state ${target} is corrupt (${read.reason}); moved it to ${aside} and started this month at 0`);
      } catch (err) {
        logger.warn(
          `usage state ${target} is corrupt (${read.reason}) and could not be moved aside (${(err as Error).message}); ` +
            'usage is kept in memory only and the file is left as it is',
        );
        file = undefined;
      }
    }
  }
  const onDisk = file !== undefined && read?.status === 'ok' ? read.usage : undefined;
  return buildStore(usage, { file, intervalMs: options.flushIntervalMs ?? 1000, write: options.write ?? writeFileAtomic, logger, clock, onDisk });
}

/** A store that keeps usage in memory only (`--no-state`, or tests). */
export function createMemoryUsageStore(): UsageStore {
  return buildStore({ month: '', requests: 0 }, { file: undefined, intervalMs: 0, write: writeFileAtomic, logger: silentLogger, clock: systemClock });
}

interface StoreSetup {
  file: string | undefined;
  intervalMs: number;
  write: WriteFn;
  logger: Logger;
  clock: Clock;
  /** What the file held when it was read at start (undefined: missing, or not a valid count). */
  onDisk?: MonthlyUsage;
}

function buildStore(initial: MonthlyUsage, setup: StoreSetup): UsageStore {
  const { file, intervalMs, write, logger, clock } = setup;
  let usage = { ...initial };
  let changes = 0; // bumped on every change
  let written = 0; // value of `changes` that the file holds
  let onDisk = setup.onDisk; // what the file held when this store last read or wrote it
  let timer: NodeJS.Timeout | undefined;
  let diskWork: Promise<void> = Promise.resolve(); // reads and writes of the file, one at a time, in order
  let closed = false;
  let reconciledAt = -Infinity;
  const warned = new Set<string>();

  function thisMonth(now: number): MonthlyUsage {
    const month = monthOf(now);
    if (usage.month !== month) usage = { month, requests: 0 };
    return usage;
  }

  function changed(): void {
    changes++;
    if (file === undefined || timer || closed) return;
    // One timer per batch of changes, not one per request; unref'd so it never keeps the process up.
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, intervalMs);
    timer.unref();
  }

  async function writeOnce(target: string, snapshot: MonthlyUsage, version: number): Promise<void> {
    try {
      await writeStateFile(target, snapshot, write);
      written = Math.max(written, version);
      onDisk = snapshot;
      if (warned.size > 0) logger.info(`usage state ${target} is written again`);
      warned.clear();
    } catch (err) {
      const error = err as NodeJS.ErrnoException;
      // Keyed by code and call, not message: the message names a fresh temporary file each time.
      const key = error.code ? `${error.code} ${error.syscall ?? ''}` : error.message;
      if (warned.has(key)) return;
      warned.add(key);
      logger.warn(`cannot write usage state ${target} (${error.message}); counting goes on in memory and the write is retried`);
    }
  }

  function serially(work: () => Promise<void>): Promise<void> {
    const run = diskWork.then(work);
    diskWork = run.catch(() => {});
    return run;
  }

  async function reconcileNow(target: string): Promise<void> {
    const read = await readStateFile(target);
    if (read.status === 'corrupt') return setAside(target, read.reason);
    // Only a valid count is taken. A missing file is written again at the next flush; an unreadable
    // one is replaced by it, or the write fails and warns.
    if (read.status !== 'ok') return;
    const found = read.usage;
    if (found.month === onDisk?.month && found.requests === onDisk.requests) return;
    onDisk = found;
    if (found.month >= usage.month) {
      usage = { ...found }; // (a later month than this store has seen is simply where it is now)
      written = changes; // the file holds it
    } else {
      usage = { month: usage.month, requests: 0 };
      changed(); // an earlier month's count: write this month's 0
    }
    logger.info(`usage state ${target} was changed outside this server; counting from ${usage.requests} for ${usage.month}`);
  }

  /** As at start (SPEC §5.4): a corrupt file is set aside, never silently written over. */
  async function setAside(target: string, reason: string): Promise<void> {
    onDisk = undefined;
    if (written === changes) changed(); // the count is written again, whether or not the move works
    try {
      const aside = await setStateAside(target, clock());
      logger.warn(`usage state ${target} became corrupt (${reason}); moved it to ${aside} and kept counting from ${usage.requests}`);
    } catch (err) {
      logger.warn(`usage state ${target} became corrupt (${reason}) and could not be moved aside (${(err as Error).message}); it is written over with this server's count`);
    }
  }

  async function flush(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (file === undefined) return;
    const target = file;
    await serially(async () => {
      if (written === changes) return;
      await reconcileNow(target);
      if (written !== changes) await writeOnce(target, { ...usage }, changes);
    });
  }

  return {
    file,
    count: (now) => thisMonth(now).requests,
    increment(now) {
      const current = thisMonth(now);
      current.requests++;
      changed();
      return current.requests;
    },
    reset(now) {
      usage = { month: monthOf(now), requests: 0 };
      changed();
    },
    reconcile: () => (file === undefined ? Promise.resolve() : serially(() => reconcileNow(file))),
    reconcileSoon(now) {
      if (file === undefined || now - reconciledAt < 1000) return;
      reconciledAt = now;
      serially(() => reconcileNow(file)).catch(() => {});
    },
    flush,
    async close() {
      closed = true;
      await flush();
    },
  };
}
