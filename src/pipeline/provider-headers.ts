import type { MeterConfig, ProviderHeaderStyle } from '../config/types.js';
import type { LimitVerdict } from './limits.js';
import type { MeterStatus } from './meters.js';
import { goDuration, headerNameOf, limitText, remainingOf, rfc3339, wholeText } from './provider-units.js';

export { goDuration, headerNameOf } from './provider-units.js';
export { ietfMeterCurrent, ietfMeterItems, ietfMeterPolicies } from './provider-ietf.js';

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
 * This file writes openai's, anthropic's and github's; the units and formats are in provider-units.ts,
 * ietf's items in provider-ietf.ts.
 */

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
