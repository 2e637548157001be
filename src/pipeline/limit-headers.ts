import type { LimitHeaderStyle, LimitsConfig, MeterConfig, ProviderHeaderStyle } from '../config/types.js';
import type { LimitGate, LimitVerdict, StoreLimitGate } from './limits.js';
import { appendProviderHeaders, ietfMeterCurrent, ietfMeterPolicies, providerHeaderNames } from './provider-headers.js';
import { secondsUntilNextMonth } from './quota.js';

/**
 * `limits.headers` and `limits.quotaRetryAfter`: which rate-limit headers an answer
 * carries and what Retry-After a quota 429 says. A config that keeps both defaults has no
 * {@link LimitStyle}, so the usual answer keeps its precomputed header list (compile.ts).
 */
export interface LimitStyle {
  /** The verdict's headers in the configured styles, Retry-After as `quotaRetryAfter` says. */
  headers(verdict: LimitVerdict, now: number): string[];
  /** The same headers added to `out` (a list made for one answer), which is returned. */
  append(out: string[], verdict: LimitVerdict, now: number): string[];
  /** The CORS headers of an answer without an Origin to echo, exposing the headers this style sends. */
  readonly anyOrigin: readonly string[];
  /** `Access-Control-Expose-Headers`: the headers sent, and Retry-After. */
  readonly expose: string;
}

/** The month's policy of the `ietf` style: the quota, what is left, seconds until the month ends. */
export interface MonthStatus {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

const STYLE_HEADERS: Record<LimitHeaderStyle, readonly string[]> = {
  legacy: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
  ietf: ['RateLimit-Policy', 'RateLimit'],
  x: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
  none: [],
};

function exposeList(styles: readonly LimitHeaderStyle[]): string {
  return [...styles.flatMap((s) => STYLE_HEADERS[s]), 'Retry-After'].join(', ');
}

/** Whether `limits` asks for anything but the defaults. */
export function isStyled(limits: LimitsConfig): boolean {
  return (
    limits.quotaRetryAfter !== undefined ||
    (limits.headers !== undefined && !(limits.headers.length === 1 && limits.headers[0] === 'legacy'))
  );
}

/**
 * The gate, with the month's status added to its verdicts when the `ietf` style shows it: `count`
 * reads the month's count after the gate counted (the usage store's). A config without
 * `limits.headers` pays one check per request. A shared store's gate is returned as it is.
 */
export function withMonthStatus(
  gate: LimitGate | StoreLimitGate,
  count: (now: number) => number,
): LimitGate | StoreLimitGate {
  // With a shared store the month lives in Redis: its verdicts go out as they come (no month policy).
  if (gate.shared) return gate;
  return {
    shared: false,
    meters: gate.meters,
    rateStatus: (limits, now) => gate.rateStatus(limits, now),
    resetRateLimit: () => gate.resetRateLimit(),
    admit(limits, now, reserves) {
      const verdict = gate.admit(limits, now, reserves);
      if (
        limits.monthlyQuota === undefined ||
        !(limits.headers?.includes('ietf') === true || limits.limitHeaders?.includes('ietf') === true)
      )
        return verdict;
      const month: MonthStatus = {
        limit: limits.monthlyQuota,
        remaining: Math.max(0, limits.monthlyQuota - count(now)),
        resetSeconds: secondsUntilNextMonth(now),
      };
      return { ...verdict, month } as LimitVerdict;
    },
  };
}

/** What beside `limits` decides an answer's limit headers: `limitHeaders:`, and every meter of the config (for the CORS list). */
export interface StyleExtras {
  providers?: readonly ProviderHeaderStyle[];
  meters?: readonly MeterConfig[];
}

/**
 * Builds the style of `limits` (with `limitHeaders` and meters), or undefined for the defaults
 * (legacy headers, Retry-After until the month resets, no meters): a config without either keeps
 * its answers' headers byte for byte.
 */
export function createLimitStyle(limits: LimitsConfig, extras: StyleExtras = {}): LimitStyle | undefined {
  const providers = extras.providers;
  const meters = extras.meters ?? [];
  if (!isStyled(limits) && providers === undefined && meters.length === 0) return undefined;
  const styles = limits.headers ?? ['legacy'];
  const windowSeconds = limits.rateLimit === undefined ? 0 : Math.max(1, Math.ceil(limits.rateLimit.windowMs / 1000));
  const named: string[] =
    providers === undefined
      ? [
          ...styles.flatMap((s) => STYLE_HEADERS[s]),
          ...(meters.length > 0 && !styles.includes('ietf') ? STYLE_HEADERS.ietf : []),
        ]
      : providers.flatMap((p) => providerHeaderNames(p, meters));
  const expose = [...new Set([...named, 'Retry-After'])].join(', ');
  const { quotaRetryAfter } = limits;

  /** `RateLimit-Policy` and `RateLimit`: the window, the month and (with `meters`) every meter. */
  function ietf(verdict: LimitVerdict, out: string[], withWindow: boolean): void {
    const { rate } = verdict;
    const month = (verdict as LimitVerdict & { month?: MonthStatus }).month;
    // RFC 9651 lists of strings with integer parameters (draft-ietf-httpapi-ratelimit-headers).
    let policies = '';
    let current = '';
    if (withWindow && rate !== undefined) {
      policies = `"window";q=${rate.limit};w=${windowSeconds}`;
      current = `"window";r=${rate.remaining};t=${rate.resetSeconds}`;
    }
    if (withWindow && month !== undefined) {
      policies += `${policies === '' ? '' : ', '}"month";q=${month.limit}`;
      current += `${current === '' ? '' : ', '}"month";r=${month.remaining};t=${month.resetSeconds}`;
    }
    if (verdict.meters !== undefined && verdict.meters.length > 0) {
      const meterPolicies = ietfMeterPolicies(verdict);
      const meterCurrent = ietfMeterCurrent(verdict);
      policies = policies === '' ? meterPolicies : `${policies}, ${meterPolicies}`;
      current = current === '' ? meterCurrent : `${current}, ${meterCurrent}`;
    }
    if (policies !== '') out.push('RateLimit-Policy', policies, 'RateLimit', current);
  }

  /** The legacy, x and ietf styles of `limits.headers` (meters in ietf items beside them). */
  function ownStyles(verdict: LimitVerdict, now: number, out: string[]): void {
    const { rate } = verdict;
    for (const style of styles) {
      if (style === 'legacy' && rate !== undefined)
        out.push(
          'RateLimit-Limit',
          String(rate.limit),
          'RateLimit-Remaining',
          String(rate.remaining),
          'RateLimit-Reset',
          String(rate.resetSeconds),
        );
      else if (style === 'x' && rate !== undefined) {
        out.push(
          'X-RateLimit-Limit',
          String(rate.limit),
          'X-RateLimit-Remaining',
          String(rate.remaining),
          'X-RateLimit-Reset',
          String(Math.ceil(now / 1000) + rate.resetSeconds),
        );
      } else if (style === 'ietf') ietf(verdict, out, true);
    }
    if (verdict.meters !== undefined && !styles.includes('ietf')) ietf(verdict, out, false);
  }

  /** Retry-After in seconds, or undefined for none: a spent budget's as its meter says, 0 for a reserve that never fits. */
  function retryAfterOf(verdict: LimitVerdict): number | undefined {
    const refused = verdict.meter;
    if (refused === undefined) {
      const seconds =
        verdict.outcome === 'quota_exceeded' && quotaRetryAfter !== undefined
          ? quotaSeconds(quotaRetryAfter)
          : verdict.retryAfterSeconds;
      return seconds > 0 ? seconds : undefined;
    }
    if (refused.why === 'never') return 0;
    if (refused.why === 'window') return verdict.retryAfterSeconds;
    // Spent: waiting does not bring an OpenAI budget back, nor a total; a month resets.
    if (refused.meter.exhausted === 'insufficientQuota' || refused.meter.period === 'total') return undefined;
    const seconds = quotaRetryAfter !== undefined ? quotaSeconds(quotaRetryAfter) : verdict.retryAfterSeconds;
    return seconds > 0 ? seconds : undefined;
  }

  function append(out: string[], verdict: LimitVerdict, now: number): string[] {
    if (providers === undefined) ownStyles(verdict, now, out);
    else
      for (const provider of providers)
        provider === 'ietf' ? ietf(verdict, out, true) : appendProviderHeaders(provider, verdict, now, out);
    const retryAfter = retryAfterOf(verdict);
    if (retryAfter !== undefined) {
      out.push('Retry-After', String(retryAfter));
      // The openai SDKs wait for retry-after-ms before Retry-After: the exact wait.
      if (providers?.includes('openai') === true)
        out.push(
          'retry-after-ms',
          String(verdict.meter?.why === 'window' ? verdict.meter.retryAfterMs : retryAfter * 1000),
        );
    }
    return out;
  }

  return {
    expose,
    anyOrigin: ['access-control-allow-origin', '*', 'access-control-expose-headers', expose],
    headers: (verdict, now) => append([], verdict, now),
    append,
  };
}

/** `quotaRetryAfter` as whole seconds (at least 1), or 0 for `none`. */
function quotaSeconds(setting: number | 'none'): number {
  return setting === 'none' ? 0 : Math.max(1, Math.ceil(setting / 1000));
}
