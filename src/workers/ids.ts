/**
 * Journal ids of a `serve --workers` worker. Each worker numbers its own entries, with no message to
 * anyone: an id is the moment the entry was recorded, in microseconds on the machine's monotonic
 * clock (one clock for every process of the machine) since the primary started, times
 * {@link MAX_SLOTS}, plus the worker's slot. So ids are unique across workers, increase in the order
 * the answers were given whichever worker gave them, and say which worker holds the entry.
 */

/** Slots (worker positions) an id has room for: `--workers` is at most this. */
export const MAX_SLOTS = 256;

/** The environment variables the primary gives each worker it forks. */
export const SLOT_ENV = 'MOCKAPI_WORKER_SLOT';
export const EPOCH_ENV = 'MOCKAPI_WORKERS_EPOCH';

/** The machine's monotonic clock in whole microseconds (CLOCK_MONOTONIC, unlike performance.now()). */
export function monotonicMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** A worker's ids. */
export interface WorkerIds {
  /** This worker's position, 0 to MAX_SLOTS - 1. */
  readonly slot: number;
  /** The id of an entry recorded now: above every id this worker gave before. */
  next(): number;
  /** The last id {@link next} gave; -1 before the first. */
  last(): number;
  /**
   * The ids below this were given, by any worker, before this call: an entry recorded later gets a
   * higher id. A query answers only the entries below it, so a client that asks again with
   * `since` = the last id it got misses nothing another worker was still recording.
   */
  cutoff(): number;
}

/** The ids of the worker in `slot`, counted from `epoch` (microseconds on {@link monotonicMicros}'s clock). */
export function createWorkerIds(slot: number, epoch: number, now: () => number = monotonicMicros): WorkerIds {
  if (!Number.isSafeInteger(slot) || slot < 0 || slot >= MAX_SLOTS)
    throw new RangeError(`worker slot must be 0 to ${MAX_SLOTS - 1}, got ${slot}`);
  let lastTick = -1;
  return {
    slot,
    next() {
      // Two entries within one microsecond: the second takes the next tick (a query's cutoff then
      // leaves it to the next query, which is all the order needs).
      const tick = Math.max(now() - epoch, lastTick + 1);
      lastTick = tick;
      return tick * MAX_SLOTS + slot;
    },
    last: () => (lastTick < 0 ? -1 : lastTick * MAX_SLOTS + slot),
    cutoff: () => (now() - epoch + 1) * MAX_SLOTS,
  };
}

/** The ids of this process when it is a worker the primary gave a slot and an epoch; undefined otherwise. */
export function workerIdsFromEnv(env: NodeJS.ProcessEnv): WorkerIds | undefined {
  const slot = env[SLOT_ENV];
  const epoch = env[EPOCH_ENV];
  if (slot === undefined || epoch === undefined || !/^\d+$/.test(slot) || !/^\d+$/.test(epoch)) return undefined;
  return createWorkerIds(Number(slot), Number(epoch));
}
