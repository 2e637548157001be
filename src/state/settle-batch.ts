import type { MeterConfig } from '../config/types.js';
import { integerText } from '../integer-text.js';

/** One admission's settle: when and in which month it was counted, and settle − reserve on each meter (millionths; 0: nothing). */
export interface SettleOne {
  readonly at: number;
  readonly month: string;
  readonly deltas: readonly number[];
}

/** Sends one settle script call: its ARGV (see SETTLE_SCRIPT) and KEYS. */
export type SendSettle = (args: string[], keys: string[]) => Promise<unknown>;

/** The settles of one event-loop turn, sent as one script call per list of meters. */
export interface SettleBatcher {
  /** Queues one settle; resolves once Redis applied it. */
  settle(meters: readonly MeterConfig[], one: SettleOne): Promise<void>;
  /** Sends what is queued now (before a close). */
  flush(): void;
}

interface Pending {
  readonly one: SettleOne;
  readonly done: () => void;
  readonly fail: (err: unknown) => void;
}

/**
 * Settles in a row of the same admission time and month summed into one (each meter's deltas added
 * up), the script then corrects each count once: the admissions of one script call share their
 * time, so a turn's settles are mostly one. The order of the settles stays, and only deltas of the
 * same sign are added up on a meter: a month or a total never goes below 0, and a refund and a
 * charge applied one after the other might stop there.
 */
export function merged(part: readonly { readonly one: SettleOne }[], count: number): SettleOne[] {
  const out: Array<{ at: number; month: string; deltas: number[] }> = [];
  for (const { one } of part) {
    const last = out[out.length - 1];
    const into =
      last !== undefined && last.at === one.at && last.month === one.month && sameSigns(last.deltas, one.deltas)
        ? last
        : undefined;
    if (into === undefined)
      out.push({ at: one.at, month: one.month, deltas: Array.from({ length: count }, (_, i) => one.deltas[i] ?? 0) });
    else for (let i = 0; i < count; i++) into.deltas[i] = into.deltas[i]! + (one.deltas[i] ?? 0);
  }
  return out;
}

function sameSigns(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i]! * (b[i] ?? 0) < 0) return false;
  return true;
}

/** Most settles in one script call, as for admissions. */
const MAX_SETTLES = 256;

/**
 * Gathers the settles of one turn (the answers a server ended in one I/O phase) into one script
 * call per list of meters, as src/state/admit-batch.ts does for admissions: one more call per turn,
 * not per request. `keysOf` gives a list's meter keys and the audit list.
 */
export function createSettleBatcher(
  send: SendSettle,
  auditCap: number,
  keysOf: (meters: readonly MeterConfig[]) => string[],
  period: Readonly<Record<MeterConfig['period'], string>>,
  schedule: (flush: () => void) => void = setImmediate,
): SettleBatcher {
  let queued = new Map<readonly MeterConfig[], Pending[]>();
  let scheduled = false;

  function sendPart(meters: readonly MeterConfig[], part: Pending[]): void {
    // Without an audit (which lists every settle), settles of the same admission time and month go as one.
    const ones = auditCap === 0 ? merged(part, meters.length) : part.map((p) => p.one);
    const args = [
      String(meters.length),
      ...meters.flatMap((m) => [m.name, period[m.period]]),
      String(auditCap),
      String(ones.length),
    ];
    for (const one of ones) {
      args.push(integerText(one.at), one.month);
      for (let i = 0; i < meters.length; i++) args.push(String(one.deltas[i] ?? 0));
    }
    send(args, keysOf(meters)).then(
      () => part.forEach((p) => p.done()),
      (err: unknown) => part.forEach((p) => p.fail(err)),
    );
  }

  function flush(): void {
    scheduled = false;
    const ready = queued;
    queued = new Map();
    for (const [meters, pending] of ready) {
      for (let from = 0; from < pending.length; from += MAX_SETTLES)
        sendPart(meters, pending.slice(from, from + MAX_SETTLES));
    }
  }

  return {
    settle(meters, one) {
      return new Promise((done, fail) => {
        let list = queued.get(meters);
        if (list === undefined) queued.set(meters, (list = []));
        list.push({ one, done, fail });
        if (!scheduled) {
          scheduled = true;
          schedule(flush);
        }
      });
    },
    flush() {
      if (scheduled) flush();
    },
  };
}
