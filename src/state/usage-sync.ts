import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import {
  monthOf,
  monthStartOf,
  readStateFile,
  setStateAside,
  withStateFileLock,
  writeStateFile,
  type MonthlyUsage,
  type WriteFn,
} from './state-file.js';
import { PendingCounts } from './usage-pending.js';
import { setLaterMonthAside } from './state-aside.js';
import type { UsageStore } from './usage-store.js';

/*
 * Several servers may share one state file. Each adds only what it admitted since its
 * last write (its pending count) to the total it finds in the file, under a lock, so no server's
 * requests are lost. The file's modification time says when its count was last set (month start,
 * reset, edit; see state-file.ts): when it changed since this server last looked, what this server
 * admitted before that time no longer counts. A server's count, for the quota, is the file's total
 * as it last read it plus its own pending requests.
 */

/** What the file held when this store last read or wrote it. */
export interface Seen {
  usage: MonthlyUsage;
  /** The file's modification time then: when its count was last set. */
  setAt: number;
}

/** What {@link buildStore} starts from: the file (or none), what it held at start, and how and how often it is written. */
export interface StoreSetup {
  file: string | undefined;
  /** What the file held at start (undefined: missing, set aside, or memory only). */
  seen: Seen | undefined;
  intervalMs: number;
  write: WriteFn;
  logger: Logger;
  clock: Clock;
}

/** The counter of a store opened by state/usage-store.ts, kept in step with its file (when it has one). */
export function buildStore(setup: StoreSetup): UsageStore {
  const { file, intervalMs, write, logger, clock } = setup;
  let seen = setup.seen;
  const pending = new PendingCounts(); // admitted, not yet in the file (only with a file)
  let usage: MonthlyUsage = { month: '', requests: 0 }; // this server's count: seen + pending, for `usage.month`
  let dirty = false; // a write is due even with nothing pending (a file set aside, an earlier month found)
  let resetAt: number | undefined; // reset() asked for at this time, not yet written
  let timer: NodeJS.Timeout | undefined;
  let diskWork: Promise<void> = Promise.resolve(); // syncs with the file, one at a time, in order
  let closed = false;
  let reconciledAt = -Infinity;
  const warned = new Set<string>();

  /** The month of the server's clock (or of the latest request counted, when a test's clock lags). */
  function currentMonth(): string {
    const month = monthOf(clock());
    return usage.month > month ? usage.month : month;
  }

  const seenIn = (month: string): number =>
    resetAt === undefined && seen?.usage.month === month ? seen.usage.requests : 0;

  function thisMonth(now: number): MonthlyUsage {
    const month = monthOf(now);
    if (usage.month !== month) usage = { month, requests: seenIn(month) + pending.inMonth(month) };
    return usage;
  }

  /**
   * The month a write is for: this server's, or the file's when another server has already moved on
   * to a later one (the month turned while this one was idle; `take` sets aside a month the clock has
   * not reached).
   */
  function fileMonth(): string {
    const month = usage.month === '' ? monthOf(clock()) : usage.month;
    return seen !== undefined && seen.usage.month > month ? seen.usage.month : month;
  }

  /** Recomputes this server's count after a read or a write. */
  function recount(): void {
    const month = fileMonth();
    usage = { month, requests: seenIn(month) + pending.inMonth(month) };
  }

  function changed(): void {
    if (file === undefined || timer || closed) return;
    // One timer per batch of changes, not one per request; unref'd so it never keeps the process up.
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, intervalMs);
    timer.unref();
  }

  function serially(work: () => Promise<void>): Promise<void> {
    const run = diskWork.then(work);
    diskWork = run.catch(() => {});
    return run;
  }

  function warnOnce(target: string, err: unknown): void {
    const error = err as NodeJS.ErrnoException;
    // Keyed by code and call, not message: the message names a fresh temporary file each time.
    const key = error.code ? `${error.code} ${error.syscall ?? ''}` : error.message;
    if (warned.has(key)) return;
    warned.add(key);
    logger.warn(
      `cannot write usage state ${target} (${error.message}); counting goes on in memory and the write is retried`,
    );
  }

  /** Takes what the file holds now (under the lock); `followed`: a reset another server wrote is expected, not news. */
  async function take(target: string, followed = false): Promise<void> {
    // What this store itself wrote in a month the clock has since gone back from is not this month's.
    if (seen !== undefined && seen.usage.month > currentMonth()) seen = undefined;
    const read = await readStateFile(target);
    if (read.status === 'corrupt') return setAside(target, read.reason);
    if (read.status === 'ok' && read.usage.month > currentMonth()) {
      dirty = true; // the clock's month is written in its place
      changed();
      await setLaterMonthAside(target, read.usage, currentMonth(), clock(), logger);
      return recount();
    }
    // A missing or unreadable file holds no count: this store writes its own again at its next write.
    if (read.status !== 'ok') return;
    const before = seen;
    seen = { usage: read.usage, setAt: read.setAt };
    if (before?.setAt === read.setAt) return recount(); // only other servers' additions since
    // Set since this store last looked (a reset, an edit, a new month, a new file): what this store
    // admitted before that no longer counts.
    pending.dropBefore(read.setAt);
    if (read.usage.month < usage.month) {
      dirty = true; // an earlier month's count: write this month's
      changed();
    }
    recount();
    if (before !== undefined && read.setAt !== monthStartOf(read.usage.month) && !followed) {
      logger.info(
        `usage state ${target} was changed outside this server; counting from ${usage.requests} for ${usage.month}`,
      );
    }
  }

  /** As at start: a corrupt file is set aside, never silently written over. */
  async function setAside(target: string, reason: string): Promise<void> {
    dirty = true; // this server's count is written again, whether or not the move works
    changed();
    try {
      const aside = await setStateAside(target, clock());
      logger.warn(
        `usage state ${target} became corrupt (${reason}); moved it to ${aside} and kept counting from ${usage.requests}`,
      );
    } catch (err) {
      logger.warn(
        `usage state ${target} became corrupt (${reason}) and could not be moved aside (${(err as Error).message}); it is written over with this server's count`,
      );
    }
  }

  /** Adds the pending requests to the total in the file (under the lock, after `take`). */
  async function addPending(target: string): Promise<void> {
    if (pending.isEmpty && !dirty && resetAt === undefined) return;
    const month = fileMonth();
    const reset = resetAt;
    const mark = pending.mark();
    const requests = seenIn(month) + pending.inMonth(month);
    // Keep the time the count was set (see state-file.ts); a reset or a new month sets it anew.
    const setAt =
      reset !== undefined
        ? Math.max(reset, Math.floor(seen?.setAt ?? -Infinity) + 1)
        : seen?.usage.month === month
          ? seen.setAt
          : monthStartOf(month);
    let written = false;
    try {
      const actual = await writeStateFile(target, { month, requests }, write, setAt);
      written = true;
      seen = { usage: { month, requests }, setAt: actual ?? setAt };
      dirty = false;
      if (resetAt === reset) resetAt = undefined;
      if (warned.size > 0) logger.info(`usage state ${target} is written again`);
      warned.clear();
    } catch (err) {
      warnOnce(target, err);
    } finally {
      pending.settle(mark, written);
    }
    recount();
  }

  /** Reads (and with `andWrite`, adds to) the file under its lock; a failure is warned about and retried. */
  function sync(andWrite: boolean, followed = false): Promise<void> {
    if (file === undefined) return Promise.resolve();
    const target = file;
    return serially(async () => {
      if (andWrite && pending.isEmpty && !dirty && resetAt === undefined) return;
      try {
        await withStateFileLock(target, andWrite ? 'write' : 'read', async () => {
          await take(target, followed);
          if (andWrite) await addPending(target);
        });
      } catch (err) {
        if (!andWrite) throw err;
        warnOnce(target, err);
      }
      if (andWrite && (!pending.isEmpty || dirty || resetAt !== undefined)) changed(); // retried within the interval
    });
  }

  function reset(now: number): void {
    pending.clear();
    resetAt = now;
    usage = { month: monthOf(now), requests: 0 };
    changed();
  }

  async function flush(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = undefined;
    await sync(true);
  }

  return {
    file,
    count: (now) => thisMonth(now).requests,
    increment(now) {
      const current = thisMonth(now);
      current.requests++;
      if (file !== undefined) pending.add(now);
      changed();
      return current.requests;
    },
    reset,
    async followReset(now) {
      if (file === undefined) return reset(now);
      // A file that cannot be read now is read again at the next write (which takes the reset then).
      await sync(false, true).catch(() => {});
    },
    set(now, requests) {
      reset(now);
      usage.requests = requests;
      if (file !== undefined && requests > 0) pending.add(now, requests);
    },
    reconcile: () => sync(false),
    reconcileSoon(now) {
      if (file === undefined || now - reconciledAt < 1000) return;
      reconciledAt = now;
      sync(false).catch(() => {});
    },
    flush,
    async close() {
      closed = true;
      await flush();
    },
  };
}
