import { cleanupTempFiles, writeFileAtomic } from './atomic-write.js';
import { systemClock, type Clock } from '../clock.js';
import { silentLogger, type Logger } from '../logger.js';
import { monthOf, readStateFile, withStateFileLock, type WriteFn } from './state-file.js';
import { keepsFile, setLaterMonthAside } from './state-aside.js';
import { buildStore, type Seen } from './usage-sync.js';

/*
 * The monthly request counter and how it is opened: from the state file (recovering from what a
 * crash or another version left there) or in memory. Keeping the count in step with the file while
 * serving — several servers sharing it — is state/usage-sync.ts's.
 */

/** The monthly request counter, persisted to a file or kept in memory. */
export interface UsageStore {
  /** The state file, or `undefined` when usage is kept in memory only. */
  readonly file: string | undefined;
  /** Requests counted in the month of `now` (0 once the month has changed). */
  count(now: number): number;
  /** Counts one request in the month of `now`; returns the new count. */
  increment(now: number): number;
  /** Sets the month of `now` back to 0, as `mockapi usage --reset` does: for every server sharing the file. */
  reset(now: number): void;
  /**
   * Another server sharing the file reset the month and wrote it (with `serve --workers`, the worker
   * that took `POST /__mockapi/reset`): re-reads the file, so what this store admitted before that
   * reset no longer counts and what it admitted since does — a reset written here instead would
   * write over what the others counted since theirs. In memory only: as `reset`.
   */
  followReset(now: number): Promise<void>;
  /** Sets the month of `now` to `requests`, as a reset followed by that many requests (`POST /__mockapi/usage`). */
  set(now: number, requests: number): void;
  /**
   * Re-reads the file: takes the requests other servers added, and a reset or an edit (what this
   * store admitted before it is dropped). `flush` does this before each write.
   */
  reconcile(): Promise<void>;
  /**
   * `reconcile()` at most once a second, in the background. For a server refusing requests over
   * its quota: its count no longer changes, so it would never write, and so never re-read, the file.
   */
  reconcileSoon(now: number): void;
  /** Adds pending requests to the file now (write errors are warned about, never thrown). */
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
  let seen: Seen | undefined;
  if (options.file !== undefined) {
    const target = options.file;
    file = await withStateFileLock(target, 'read', async () => {
      await cleanupTempFiles(target); // (under the lock: no other server is writing)
      const read = await readStateFile(target);
      if (read.status === 'ok' && read.usage.month > monthOf(now)) {
        await setLaterMonthAside(target, read.usage, monthOf(now), now, logger);
        return target;
      }
      if (read.status === 'ok') seen = { usage: read.usage, setAt: read.setAt };
      return (await keepsFile(target, read, now, logger)) ? target : undefined;
    }).catch((err: Error) => {
      logger.warn(
        `cannot read usage state ${target} (${err.message}); usage is kept in memory only and the file is left as it is`,
      );
      return undefined;
    });
  }
  return buildStore({
    file,
    seen,
    intervalMs: options.flushIntervalMs ?? 1000,
    write: options.write ?? writeFileAtomic,
    logger,
    clock,
  });
}

/** A store that keeps usage in memory only (`--no-state`, a named session, or tests); `clock` tells the month when it is asked. */
export function createMemoryUsageStore(clock: Clock = systemClock): UsageStore {
  return buildStore({
    file: undefined,
    seen: undefined,
    intervalMs: 0,
    write: writeFileAtomic,
    logger: silentLogger,
    clock,
  });
}
