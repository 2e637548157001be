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
    const args = [String(meters.length), ...meters.flatMap((m) => [m.name, period[m.period]]), String(auditCap), String(part.length)];
    for (const { one } of part) {
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
      for (let from = 0; from < pending.length; from += MAX_SETTLES) sendPart(meters, pending.slice(from, from + MAX_SETTLES));
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
