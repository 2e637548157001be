import type { Clock } from '../clock.js';
import { DueQueue } from './due-queue.js';

/** When attempts start (see {@link createSchedule}). */
export interface Schedule<T extends { dueAt: number }> {
  /** Queues an item; it starts once due, never on the caller's path. */
  add(item: T): void;
  /** An item started by `start` is done (or did not go out after all): its slot is free. */
  finished(): void;
  /** The clock moved, or something became sendable: start what is due by now. */
  poke(): void;
  /** Items started and not finished. */
  readonly inFlight: number;
  /** Stops every timer; what was queued stays unsent. */
  close(): void;
}

/**
 * One queue by due time (on the server's clock, which runs at real speed between moves), one
 * timer for the earliest item, and at most `maxInFlight` started at once. Due items start
 * together, once per turn of the event loop, in one call of `start`: a burst of events or of
 * finished attempts makes one batch (one message to the delivery thread), not one call each.
 */
export function createSchedule<T extends { dueAt: number }>(
  clock: Clock,
  maxInFlight: number,
  start: (batch: T[]) => void,
): Schedule<T> {
  const waiting = new DueQueue<T>();
  let inFlight = 0;
  let timer: NodeJS.Timeout | undefined;
  let timerDue = Infinity; // server-clock time the armed timer is for
  let soon: NodeJS.Immediate | undefined;
  let closed = false;

  function arm(): void {
    const next = waiting.peek();
    // Nothing queued, or every slot taken (the next finished item arms again): no timer.
    if (closed || next === undefined || inFlight >= maxInFlight) return disarm();
    if (next.dueAt <= clock()) {
      disarm();
      soon ??= setImmediate(run);
      return;
    }
    if (timer !== undefined && timerDue <= next.dueAt) return; // armed early enough already
    disarm();
    timerDue = next.dueAt;
    // Not unref'd: the listening server keeps the process alive anyway, and `close` clears it.
    timer = setTimeout(run, Math.min(2 ** 31 - 1, next.dueAt - clock()));
  }

  function disarm(): void {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    timerDue = Infinity;
  }

  function run(): void {
    soon = undefined;
    disarm();
    if (closed) return;
    const now = clock();
    const batch: T[] = [];
    while (inFlight < maxInFlight && (waiting.peek()?.dueAt ?? Infinity) <= now) {
      batch.push(waiting.pop() as T);
      inFlight++;
    }
    if (batch.length > 0) start(batch);
    arm();
  }

  return {
    add(item) {
      waiting.push(item);
      arm();
    },
    finished() {
      inFlight--;
      arm();
    },
    poke: arm,
    get inFlight() {
      return inFlight;
    },
    close() {
      closed = true;
      disarm();
      if (soon !== undefined) clearImmediate(soon);
      soon = undefined;
      waiting.clear();
    },
  };
}
