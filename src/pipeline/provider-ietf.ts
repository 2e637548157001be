/**
 * The meters' items of `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers) for
 * `limitHeaders: [ietf]`: made once per list of meters of a load, each `RateLimit` item made again
 * only when its figures changed (src/pipeline/limit-headers.ts writes them with the month).
 */
import { METER_SCALE, type MeterConfig } from '../config/types.js';
import { integerText } from '../integer-text.js';
import type { LimitVerdict } from './limits.js';
import type { MeterStatus } from './meters.js';
import { limitText, remainingOf } from './provider-units.js';

/** The meters' items of `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers), each list joined with `, `. */
export function ietfMeterItems(verdict: LimitVerdict): { policies: string; current: string } {
  return { policies: ietfMeterPolicies(verdict), current: ietfMeterCurrent(verdict) };
}

/** The meters' items of `RateLimit-Policy`, joined with `, ` (made once per list of meters). */
export function ietfMeterPolicies(verdict: LimitVerdict): string {
  return ietfList(verdict.meters ?? []).policies;
}

/** The meters' items of `RateLimit`, joined with `, `: each item made again only when its figures changed. */
export function ietfMeterCurrent(verdict: LimitVerdict): string {
  const meters = verdict.meters ?? [];
  const { items } = ietfList(meters);
  if (meters.length === 0) return '';
  let current = ietfCurrent(items[0]!, meters[0]!).text;
  for (let i = 1; i < meters.length; i++) {
    const item = ietfCurrent(items[i]!, meters[i]!);
    current += item.joined ??= `, ${item.text}`;
  }
  return current;
}

/**
 * A meter's ietf items, made once per meter of a load: its quoted name, its policy item, and its
 * last `RateLimit` item with the figures it was made of (most answers repeat a month's or a quiet
 * window's figures, so the item is made again only when one of them changed).
 */
interface IetfItem {
  readonly name: string;
  readonly policy: string;
  readonly total: boolean;
  /** `"name";r=`: what every `RateLimit` item of the meter starts with. */
  readonly start: string;
  left: number;
  reset: number;
  /** `;t=<reset>` of the last reset (`` for a total), made again only when the reset changed. */
  end: string;
  text: string;
  /** `, ` and the text, for an item after the first, made on first use after the text changed. */
  joined: string | undefined;
}

/** The items of a list of meters, with their `RateLimit-Policy` list joined once. */
interface IetfList {
  readonly meters: readonly MeterConfig[];
  readonly items: readonly IetfItem[];
  readonly policies: string;
}

/** The lists made, by their first meter (a load's meter lists are few); the last one asked first. */
const ietfLists = new WeakMap<MeterConfig, IetfList[]>();
let lastList: IetfList | undefined;

function sameMeters(list: IetfList, statuses: readonly MeterStatus[]): boolean {
  if (list.meters.length !== statuses.length) return false;
  for (let i = 0; i < statuses.length; i++) if (list.meters[i] !== statuses[i]!.meter) return false;
  return true;
}

function ietfList(statuses: readonly MeterStatus[]): IetfList {
  if (lastList !== undefined && sameMeters(lastList, statuses)) return lastList;
  if (statuses.length === 0) return (lastList = { meters: [], items: [], policies: '' });
  const first = statuses[0]!.meter;
  let lists = ietfLists.get(first);
  if (lists === undefined) ietfLists.set(first, (lists = []));
  let list = lists.find((l) => sameMeters(l, statuses));
  if (list === undefined) {
    const items = statuses.map((s) => ietfItem(s.meter));
    lists.push(
      (list = { meters: statuses.map((s) => s.meter), items, policies: items.map((item) => item.policy).join(', ') }),
    );
  }
  return (lastList = list);
}

/** A meter's `RateLimit` item (`item.text`): its name, what is left (whole units, rounded down) and, but for a total, the seconds until its reset. */
function ietfCurrent(item: IetfItem, status: MeterStatus): IetfItem {
  const left = Math.floor(remainingOf(status) / METER_SCALE);
  const reset = item.total ? 0 : Math.ceil(status.resetMs / 1000);
  if (reset !== item.reset) {
    item.reset = reset;
    item.end = item.total ? '' : `;t=${reset}`;
    item.left = NaN;
  }
  if (left !== item.left) {
    item.left = left;
    item.text = item.start + integerText(left) + item.end;
    item.joined = undefined;
  }
  return item;
}

const ietfItems = new WeakMap<MeterConfig, IetfItem>();
function ietfItem(meter: MeterConfig): IetfItem {
  let item = ietfItems.get(meter);
  if (item === undefined) {
    const name = JSON.stringify(meter.headerName ?? meter.name);
    const window = meter.period === 'window' ? `;w=${Math.max(1, Math.ceil(meter.windowMs / 1000))}` : '';
    ietfItems.set(
      meter,
      (item = {
        name,
        policy: `${name};q=${limitText(meter.limit)}${window}`,
        total: meter.period === 'total',
        start: `${name};r=`,
        left: NaN,
        reset: NaN,
        end: '',
        text: '',
        joined: undefined,
      }),
    );
  }
  return item;
}
