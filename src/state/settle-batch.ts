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

/**
 * Settles of one list of meters ready to go to Redis: `count` settles as ARGV (per settle its
 * admission time, month and a delta per meter), and what to call once Redis applied them or failed.
 */
export interface SettlePart {
  readonly count: number;
  readonly args: readonly string[];
  done(): void;
  fail(err: unknown): void;
}

/** The settles of one event-loop turn, sent as one script call per list of meters, or carried by an admission call. */
export interface SettleBatcher {
  /** Queues one settle; resolves once Redis applied it. */
  settle(meters: readonly MeterConfig[], one: SettleOne): Promise<void>;
  /** Takes the settles of `meters` queued and not sent yet, for an admission call of the same meters to carry. */
  take(meters: readonly MeterConfig[]): SettlePart | undefined;
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

/** Most settles in one settle script call, as for admissions. */
const MAX_SETTLES = 256;

/**
 * Queued settles as one part. Without an audit (which lists every settle), settles of the same
 * admission time and month go as one.
 */
function partOf(pending: readonly Pending[], count: number, audited: boolean): SettlePart {
  const ones = audited ? pending.map((p) => p.one) : merged(pending, count);
  const args: string[] = [];
  for (const one of ones) {
    args.push(integerText(one.at), one.month);
    for (let i = 0; i < count; i++) args.push(String(one.deltas[i] ?? 0));
  }
  return {
    count: ones.length,
    args,
    done: () => pending.forEach((p) => p.done()),
    fail: (err) => pending.forEach((p) => p.fail(err)),
  };
}

/**
 * Gathers the settles of one turn (the answers a server ended in one I/O phase). An admission call
 * of the same meters in the same turn carries them (`handOver` gives them to one queued, and the
 * admissions' flush `take`s those queued before it): no call of their own while requests keep
 * coming. Otherwise one settle script call per list of meters, as src/state/admit-batch.ts does for
 * admissions. `keysOf` gives a list's meter keys and the audit list.
 */
export function createSettleBatcher(
  send: SendSettle,
  auditCap: number,
  keysOf: (meters: readonly MeterConfig[]) => string[],
  period: Readonly<Record<MeterConfig['period'], string>>,
  handOver: (meters: readonly MeterConfig[], part: SettlePart) => boolean = () => false,
  schedule: (flush: () => void) => void = setImmediate,
): SettleBatcher {
  let queued = new Map<readonly MeterConfig[], Pending[]>();
  let scheduled = false;

  function sendPart(meters: readonly MeterConfig[], part: SettlePart): void {
    const args = [
      String(meters.length),
      ...meters.flatMap((m) => [m.name, period[m.period]]),
      String(auditCap),
      String(part.count),
      ...part.args,
    ];
    send(args, keysOf(meters)).then(
      () => part.done(),
      (err: unknown) => part.fail(err),
    );
  }

  function flush(): void {
    scheduled = false;
    const ready = queued;
    queued = new Map();
    for (const [meters, pending] of ready) {
      if (pending.length <= MAX_SETTLES) {
        const part = partOf(pending, meters.length, auditCap > 0);
        if (!handOver(meters, part)) sendPart(meters, part);
        continue;
      }
      for (let from = 0; from < pending.length; from += MAX_SETTLES)
        sendPart(meters, partOf(pending.slice(from, from + MAX_SETTLES), meters.length, auditCap > 0));
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
    take(meters) {
      const pending = queued.get(meters);
      if (pending === undefined) return undefined;
      queued.delete(meters);
      return partOf(pending, meters.length, auditCap > 0);
    },
    flush() {
      if (scheduled) flush();
    },
  };
}
