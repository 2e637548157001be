import { METER_SCALE, type MeterConfig } from '../config/types.js';
import { monthOf } from '../state/state-file.js';
import { createAmountWindow, type AmountWindow } from './meter-window.js';
import { nextMonthStart } from './quota.js';

/*
 * Meters (`meters:` of a plan or of `limits`): what requests cost — tokens, points, spend — counted
 * exactly per key, in a sliding window, a calendar month (UTC) or in total. The limits gate decides a
 * request's meters with its rate window and month, in the same step (src/pipeline/limits.ts); a
 * shared store does the same inside Redis (src/state/meter-lua.ts). Amounts are integers in
 * millionths (METER_SCALE).
 */

/** A request's reserve on each meter of its limits, in the meters' order; {@link NOT_METERED} where its endpoint has no cost on that meter. */
export type Reserves = readonly number[];

/** A meter its endpoint does not name: the request neither asks it nor counts in it. */
export const NOT_METERED = -1;

/** One meter as an answer's limit headers and `usage` show it. */
export interface MeterStatus {
  readonly meter: MeterConfig;
  /** What the window (month, total) holds, this request included when it was admitted. */
  readonly used: number;
  /** Milliseconds until the oldest amount held leaves the window (until the next month for `month`); 0 when nothing is held or for `total`. */
  readonly resetMs: number;
}

/** Why a meter refused a request. */
export interface MeterRefusal {
  readonly meter: MeterConfig;
  /**
   * `window`: wait for room (a window's, or a month's that has some left but not this much: until it
   * resets); `never`: the reserve is more than the whole limit, or more than a total has left;
   * `exhausted`: a month or total spent (nothing left).
   */
  readonly why: 'window' | 'never' | 'exhausted';
  readonly used: number;
  /** The request's reserve. */
  readonly requested: number;
  /** Milliseconds until the reserve fits (`window`), until the month resets (`exhausted` of a month); 0 otherwise. */
  readonly retryAfterMs: number;
}

/** What a settle needs of an admission: when and in which month it was counted, and what it reserved. */
export interface SettleToken {
  readonly at: number;
  readonly month: string;
  readonly meters: readonly MeterConfig[];
  readonly reserves: Reserves;
}

/** Meters by their text in messages: `30000 tokens per 1m`, `5 spend per month`. */
export function describeMeter(meter: MeterConfig): string {
  const per =
    meter.period === 'window'
      ? `per ${windowText(meter.windowMs)}`
      : meter.period === 'month'
        ? 'per month'
        : 'in total';
  return `${formatAmount(meter.limit)} ${meter.name} ${per}`;
}

/** An amount in millionths as the meter's unit: `30000`, `4.99`, `0.000002`. */
export function formatAmount(units: number): string {
  return String(Math.round(units) / METER_SCALE);
}

/** A window length as the config writes it: `1m`, `90s`, `1h`, `250ms`. */
export function windowText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** The counts of every meter of one key: its windows, months and totals, by meter name (kept across reloads). */
export interface MeterLedger {
  /** The first meter that refuses `reserves` at `now`, counting nothing; undefined when every meter admits it. */
  refusal(meters: readonly MeterConfig[], reserves: Reserves, now: number): MeterRefusal | undefined;
  /** Counts `reserves` at `now` (after a {@link refusal} that found none, in the same tick). */
  record(meters: readonly MeterConfig[], reserves: Reserves, now: number): void;
  /** Every meter as it stands at `now`. */
  status(meters: readonly MeterConfig[], now: number): MeterStatus[];
  /** Corrects an admission by `deltas` (settle − reserve, per meter; 0: nothing). */
  settle(token: SettleToken, deltas: readonly number[]): void;
  /** Sets the meter `name` (its window, month or total) to `units` at `now` (`POST /__mockapi/usage`). */
  set(meter: MeterConfig, units: number, now: number): void;
  /** Empties the meters' windows and/or their months and totals (`POST /__mockapi/reset` of `rateLimit`, `usage`). */
  clear(windows: boolean, counts: boolean): void;
}

// The end of the month last asked (as src/state/state-file.ts's monthOf caches its month): most calls
// are of the same month, and a Date per call would be most of a status.
let endOf = { from: 0, to: -1, end: 0 };
function monthEnd(now: number): number {
  if (now >= endOf.from && now < endOf.to) return endOf.end;
  const end = nextMonthStart(now);
  const date = new Date(now);
  const start = new Date(0);
  start.setUTCFullYear(date.getUTCFullYear(), date.getUTCMonth(), 1);
  endOf = { from: start.getTime(), to: end, end };
  return end;
}

interface MonthCount {
  month: string;
  used: number;
}

/** Creates an empty ledger. */
export function createMeterLedger(): MeterLedger {
  const windows = new Map<string, AmountWindow>();
  const months = new Map<string, MonthCount>();
  const totals = new Map<string, number>();

  function windowOf(name: string): AmountWindow {
    let window = windows.get(name);
    if (window === undefined) windows.set(name, (window = createAmountWindow()));
    return window;
  }

  function monthUsed(name: string, now: number): number {
    const count = months.get(name);
    return count !== undefined && count.month === monthOf(now) ? count.used : 0;
  }

  function used(meter: MeterConfig, now: number): number {
    if (meter.period === 'window') return windowOf(meter.name).used(meter.windowMs, now);
    return meter.period === 'month' ? monthUsed(meter.name, now) : (totals.get(meter.name) ?? 0);
  }

  function refusalOf(meter: MeterConfig, reserve: number, now: number): MeterRefusal | undefined {
    const held = used(meter, now);
    if (meter.period === 'window') {
      if (held + reserve <= meter.limit) return undefined;
      return {
        meter,
        why: 'window',
        used: held,
        requested: reserve,
        retryAfterMs: windowOf(meter.name).fitsIn(reserve, meter.limit, meter.windowMs, now),
      };
    }
    if (held >= meter.limit)
      return {
        meter,
        why: 'exhausted',
        used: held,
        requested: reserve,
        retryAfterMs: meter.period === 'month' ? monthEnd(now) - now : 0,
      };
    if (held + reserve <= meter.limit) return undefined;
    // Room left, but less than this request asks: not spent (a smaller request still fits). A month
    // has room for it again when it resets; a total never does, short of a reset or a smaller request.
    return meter.period === 'month'
      ? { meter, why: 'window', used: held, requested: reserve, retryAfterMs: monthEnd(now) - now }
      : { meter, why: 'never', used: held, requested: reserve, retryAfterMs: 0 };
  }

  return {
    refusal(meters, reserves, now) {
      // A reserve over the whole limit can never fit; a spent budget does not come back by waiting:
      // both are said before a window that only asks to wait.
      for (let i = 0; i < meters.length; i++) {
        const reserve = reserves[i]!;
        const meter = meters[i]!;
        if (reserve > meter.limit)
          return { meter, why: 'never', used: used(meter, now), requested: reserve, retryAfterMs: 0 };
      }
      let wait: MeterRefusal | undefined;
      for (let i = 0; i < meters.length; i++) {
        const reserve = reserves[i]!;
        if (reserve === NOT_METERED) continue;
        const refused = refusalOf(meters[i]!, reserve, now);
        if (refused === undefined) continue;
        if (refused.why === 'exhausted') return refused;
        wait ??= refused;
      }
      return wait;
    },
    record(meters, reserves, now) {
      for (let i = 0; i < meters.length; i++) {
        const reserve = reserves[i]!;
        if (reserve === NOT_METERED) continue;
        const meter = meters[i]!;
        if (meter.period === 'window') windowOf(meter.name).add(reserve, now);
        else if (meter.period === 'month') {
          const count = months.get(meter.name);
          const month = monthOf(now);
          if (count !== undefined && count.month === month) count.used += reserve;
          else months.set(meter.name, { month, used: reserve });
        } else totals.set(meter.name, (totals.get(meter.name) ?? 0) + reserve);
      }
    },
    status(meters, now) {
      // Sized at once: a list grown by push gets a backing store of 17 slots for its first item.
      const out = new Array<MeterStatus>(meters.length);
      for (let i = 0; i < meters.length; i++) {
        const meter = meters[i]!;
        if (meter.period === 'window') {
          const window = windowOf(meter.name);
          out[i] = { meter, used: window.used(meter.windowMs, now), resetMs: window.resetIn(meter.windowMs, now) };
        } else
          out[i] = {
            meter,
            used: meter.period === 'month' ? monthUsed(meter.name, now) : (totals.get(meter.name) ?? 0),
            resetMs: meter.period === 'month' ? monthEnd(now) - now : 0,
          };
      }
      return out;
    },
    settle(token, deltas) {
      const list = token.meters;
      for (let i = 0; i < list.length; i++) {
        const meter = list[i]!;
        const delta = deltas[i] ?? 0;
        if (delta === 0 || token.reserves[i] === NOT_METERED) continue;
        if (meter.period === 'window') windows.get(meter.name)?.correct(token.at, delta);
        else if (meter.period === 'month') {
          const count = months.get(meter.name);
          if (count !== undefined && count.month === token.month) count.used = Math.max(0, count.used + delta);
        } else totals.set(meter.name, Math.max(0, (totals.get(meter.name) ?? 0) + delta));
      }
    },
    set(meter, units, now) {
      if (meter.period === 'window') {
        const window = windowOf(meter.name);
        window.clear();
        if (units > 0) window.add(units, now);
      } else if (meter.period === 'month') months.set(meter.name, { month: monthOf(now), used: units });
      else totals.set(meter.name, units);
    },
    clear(emptyWindows, counts) {
      if (emptyWindows) windows.clear();
      if (counts) {
        months.clear();
        totals.clear();
      }
    },
  };
}
