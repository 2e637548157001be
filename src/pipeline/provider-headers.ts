import { METER_SCALE, type MeterConfig, type ProviderHeaderStyle } from '../config/types.js';
import { integerText } from '../integer-text.js';
import type { LimitVerdict } from './limits.js';
import type { MeterStatus } from './meters.js';

/*
 * `limitHeaders:` — the rate window's and every meter's limit, remaining and reset in a provider's
 * names and formats (src/pipeline/limit-headers.ts picks them per answer):
 * - openai: x-ratelimit-{limit,remaining,reset}-{requests,<meter>}, resets as Go durations (`6m0s`,
 *   `1.5s`, `12ms`); a 429 also carries `retry-after-ms`, which the openai SDKs read first;
 * - anthropic: anthropic-ratelimit-{requests,<meter>}-{limit,remaining,reset}, resets in RFC 3339
 *   (a `tokens` set is the most restrictive token meter's when no meter is called `tokens`);
 * - github: x-ratelimit-{limit,remaining,used,reset,resource} of the one limit the request counted
 *   against (a window meter it reserved on, else the request window: resource `core`), reset in
 *   epoch seconds;
 * - ietf: RateLimit-Policy and RateLimit items (draft-ietf-httpapi-ratelimit-headers), one per meter.
 * A meter's name in the headers is its `headerName`, else its name with `_` written `-`
 * (`input_tokens` → `input-tokens`); github's resource for a meter named `points` is `graphql`.
 */

/** A meter's name in a provider's headers. */
export function headerNameOf(meter: MeterConfig): string {
  return meter.headerName ?? meter.name.replace(/_/g, '-');
}

/** What is left of a meter, in its unit, never below 0. */
function remainingOf(status: MeterStatus): number {
  return Math.max(0, status.meter.limit - status.used);
}

/** A limit in its unit: whole units, else up to 3 decimals (a limit is what the config says). */
function limitText(units: number): string {
  if (units % METER_SCALE === 0) return String(units / METER_SCALE);
  return (Math.round((units / METER_SCALE) * 1000) / 1000).toFixed(3).replace(/\.?0+$/, '');
}

/**
 * A remaining or used amount as the providers write it: a whole number (OpenAI, Anthropic and
 * GitHub send integers, and the ietf draft's `r` is an Integer), remaining rounded down — what a
 * client may still ask for —, used rounded up, so that used + remaining never exceeds the limit.
 */
function wholeText(units: number, round: 'down' | 'up'): string {
  const whole = round === 'down' ? Math.floor(units / METER_SCALE) : Math.ceil(units / METER_SCALE);
  return integerText(whole);
}

/** A Go duration, as OpenAI writes its resets: `0s`, `12ms`, `1.5s`, `6m0s`, `1h2m3s`. */
export function goDuration(ms: number): string {
  const whole = Math.max(0, Math.round(ms));
  if (whole === 0) return '0s';
  if (whole < 1000) return `${whole}ms`;
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor((whole % 3_600_000) / 60_000);
  const seconds = ((whole % 60_000) / 1000).toFixed(3).replace(/\.?0+$/, '');
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}

/** An RFC 3339 time in whole seconds, as Anthropic writes its resets: `2026-05-01T12:00:30Z`. */
function rfc3339(ms: number): string {
  return `${new Date(Math.ceil(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`;
}

/** The window meters of a verdict (month and total budgets have no provider headers of their own). */
function windowMeters(verdict: LimitVerdict): readonly MeterStatus[] {
  return verdict.meters?.filter((m) => m.meter.period === 'window') ?? [];
}

function openai(verdict: LimitVerdict, out: string[]): void {
  const { rate } = verdict;
  if (rate !== undefined) {
    out.push(
      'x-ratelimit-limit-requests',
      String(rate.limit),
      'x-ratelimit-remaining-requests',
      String(rate.remaining),
      'x-ratelimit-reset-requests',
      goDuration(rate.resetSeconds * 1000),
    );
  }
  for (const status of windowMeters(verdict)) {
    const name = headerNameOf(status.meter);
    out.push(
      `x-ratelimit-limit-${name}`,
      limitText(status.meter.limit),
      `x-ratelimit-remaining-${name}`,
      wholeText(remainingOf(status), 'down'),
      `x-ratelimit-reset-${name}`,
      goDuration(status.resetMs),
    );
  }
}

function anthropic(verdict: LimitVerdict, now: number, out: string[]): void {
  const { rate } = verdict;
  if (rate !== undefined) {
    out.push(
      'anthropic-ratelimit-requests-limit',
      String(rate.limit),
      'anthropic-ratelimit-requests-remaining',
      String(rate.remaining),
      'anthropic-ratelimit-requests-reset',
      rfc3339(now + rate.resetSeconds * 1000),
    );
  }
  const meters = windowMeters(verdict);
  let tightest: MeterStatus | undefined;
  for (const status of meters) {
    const name = headerNameOf(status.meter);
    out.push(
      `anthropic-ratelimit-${name}-limit`,
      limitText(status.meter.limit),
      `anthropic-ratelimit-${name}-remaining`,
      wholeText(remainingOf(status), 'down'),
      `anthropic-ratelimit-${name}-reset`,
      rfc3339(now + status.resetMs),
    );
    if (name.endsWith('tokens') && (tightest === undefined || remainingOf(status) < remainingOf(tightest)))
      tightest = status;
  }
  // Anthropic's `tokens` set: the most restrictive token limit in effect.
  if (tightest !== undefined && !meters.some((s) => headerNameOf(s.meter) === 'tokens')) {
    out.push(
      'anthropic-ratelimit-tokens-limit',
      limitText(tightest.meter.limit),
      'anthropic-ratelimit-tokens-remaining',
      wholeText(remainingOf(tightest), 'down'),
      'anthropic-ratelimit-tokens-reset',
      rfc3339(now + tightest.resetMs),
    );
  }
}

/** The window meter a request counted against: the one that refused it, else one it reserved on. */
function countedMeter(verdict: LimitVerdict): MeterStatus | undefined {
  const meters = verdict.meters;
  if (meters === undefined) return undefined;
  // (a month or total that refused it has no place in the providers' headers: the request window's go instead)
  if (verdict.meter !== undefined)
    return meters.find((m) => m.meter === verdict.meter!.meter && m.meter.period === 'window');
  const reserves = verdict.settle?.reserves;
  if (reserves === undefined) return undefined;
  return meters.find((m, i) => m.meter.period === 'window' && reserves[i]! >= 0);
}

function github(verdict: LimitVerdict, now: number, out: string[]): void {
  const meter = countedMeter(verdict);
  if (meter !== undefined) {
    const resource = meter.meter.headerName ?? (meter.meter.name === 'points' ? 'graphql' : meter.meter.name);
    const reset = Math.ceil((now + meter.resetMs) / 1000);
    out.push(
      'x-ratelimit-limit',
      limitText(meter.meter.limit),
      'x-ratelimit-remaining',
      wholeText(remainingOf(meter), 'down'),
      'x-ratelimit-used',
      wholeText(Math.min(meter.used, meter.meter.limit), 'up'),
      'x-ratelimit-reset',
      String(reset),
      'x-ratelimit-resource',
      resource,
    );
    return;
  }
  const { rate } = verdict;
  if (rate === undefined) return;
  out.push(
    'x-ratelimit-limit',
    String(rate.limit),
    'x-ratelimit-remaining',
    String(rate.remaining),
    'x-ratelimit-used',
    String(rate.limit - rate.remaining),
    'x-ratelimit-reset',
    String(Math.ceil(now / 1000) + rate.resetSeconds),
    'x-ratelimit-resource',
    'core',
  );
}

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

/** Adds the headers of one provider style (not `ietf`, which src/pipeline/limit-headers.ts writes with the month) to `out`. */
export function appendProviderHeaders(
  style: ProviderHeaderStyle,
  verdict: LimitVerdict,
  now: number,
  out: string[],
): void {
  if (style === 'openai') openai(verdict, out);
  else if (style === 'anthropic') anthropic(verdict, now, out);
  else if (style === 'github') github(verdict, now, out);
}

/** The headers each provider style may send, for `Access-Control-Expose-Headers`. */
export function providerHeaderNames(style: ProviderHeaderStyle, meters: readonly MeterConfig[]): string[] {
  const names = [...new Set(meters.filter((m) => m.period === 'window').map(headerNameOf))];
  if (style === 'openai') {
    return ['requests', ...names]
      .flatMap((n) => [`x-ratelimit-limit-${n}`, `x-ratelimit-remaining-${n}`, `x-ratelimit-reset-${n}`])
      .concat('retry-after-ms');
  }
  if (style === 'anthropic') {
    const all = [...new Set(['requests', ...names, ...(names.some((n) => n.endsWith('tokens')) ? ['tokens'] : [])])];
    return all.flatMap((n) => [
      `anthropic-ratelimit-${n}-limit`,
      `anthropic-ratelimit-${n}-remaining`,
      `anthropic-ratelimit-${n}-reset`,
    ]);
  }
  if (style === 'github')
    return [
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-used',
      'x-ratelimit-reset',
      'x-ratelimit-resource',
    ];
  if (style === 'ietf') return ['RateLimit-Policy', 'RateLimit'];
  return [];
}
