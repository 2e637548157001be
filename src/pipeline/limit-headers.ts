import type { LimitHeaderStyle, LimitsConfig } from '../config/types.js';
import type { LimitGate, LimitVerdict, StoreLimitGate } from './limits.js';
import { secondsUntilNextMonth } from './quota.js';

/**
 * `limits.headers` and `limits.quotaRetryAfter`: which rate-limit headers an answer
 * carries and what Retry-After a quota 429 says. A config that keeps both defaults has no
 * {@link LimitStyle}, so the usual answer keeps its precomputed header list (compile.ts).
 */
export interface LimitStyle {
  /** The verdict's headers in the configured styles, Retry-After as `quotaRetryAfter` says. */
  headers(verdict: LimitVerdict, now: number): string[];
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
  return limits.quotaRetryAfter !== undefined || (limits.headers !== undefined && !(limits.headers.length === 1 && limits.headers[0] === 'legacy'));
}

/**
 * The gate, with the month's status added to its verdicts when the `ietf` style shows it: `count`
 * reads the month's count after the gate counted (the usage store's). A config without
 * `limits.headers` pays one check per request. A shared store's gate is returned as it is.
 */
export function withMonthStatus(gate: LimitGate | StoreLimitGate, count: (now: number) => number): LimitGate | StoreLimitGate {
  // With a shared store the month lives in Redis: its verdicts go out as they come (no month policy).
  if (gate.shared) return gate;
  return {
    shared: false,
    rateStatus: (limits, now) => gate.rateStatus(limits, now),
    resetRateLimit: () => gate.resetRateLimit(),
    admit(limits, now) {
      const verdict = gate.admit(limits, now);
      if (limits.headers === undefined || limits.monthlyQuota === undefined || !limits.headers.includes('ietf')) return verdict;
      const month: MonthStatus = { limit: limits.monthlyQuota, remaining: Math.max(0, limits.monthlyQuota - count(now)), resetSeconds: secondsUntilNextMonth(now) };
      return { ...verdict, month } as LimitVerdict;
    },
  };
}

/** Builds the style of `limits`, or undefined for the defaults (legacy headers, Retry-After until the month resets). */
export function createLimitStyle(limits: LimitsConfig): LimitStyle | undefined {
  if (!isStyled(limits)) return undefined;
  const styles = limits.headers ?? ['legacy'];
  const windowSeconds = limits.rateLimit === undefined ? 0 : Math.max(1, Math.ceil(limits.rateLimit.windowMs / 1000));
  const expose = exposeList(styles);
  const { quotaRetryAfter } = limits;
  return {
    expose,
    anyOrigin: ['access-control-allow-origin', '*', 'access-control-expose-headers', expose],
    headers(verdict, now) {
      const { rate } = verdict;
      const month = (verdict as LimitVerdict & { month?: MonthStatus }).month;
      const out: string[] = [];
      for (const style of styles) {
        if (style === 'legacy' && rate !== undefined) out.push('RateLimit-Limit', String(rate.limit), 'RateLimit-Remaining', String(rate.remaining), 'RateLimit-Reset', String(rate.resetSeconds));
        else if (style === 'x' && rate !== undefined) {
          out.push('X-RateLimit-Limit', String(rate.limit), 'X-RateLimit-Remaining', String(rate.remaining), 'X-RateLimit-Reset', String(Math.ceil(now / 1000) + rate.resetSeconds));
        } else if (style === 'ietf') {
          // RFC 9651 lists of strings with integer parameters (draft-ietf-httpapi-ratelimit-headers).
          const policies: string[] = [];
          const current: string[] = [];
          if (rate !== undefined) {
            policies.push(`"window";q=${rate.limit};w=${windowSeconds}`);
            current.push(`"window";r=${rate.remaining};t=${rate.resetSeconds}`);
          }
          if (month !== undefined) {
            policies.push(`"month";q=${month.limit}`);
            current.push(`"month";r=${month.remaining};t=${month.resetSeconds}`);
          }
          if (policies.length > 0) out.push('RateLimit-Policy', policies.join(', '), 'RateLimit', current.join(', '));
        }
      }
      const retryAfter = verdict.outcome === 'quota_exceeded' && quotaRetryAfter !== undefined ? quotaSeconds(quotaRetryAfter) : verdict.retryAfterSeconds;
      if (retryAfter > 0) out.push('Retry-After', String(retryAfter));
      return out;
    },
  };
}

/** `quotaRetryAfter` as whole seconds (at least 1), or 0 for `none`. */
function quotaSeconds(setting: number | 'none'): number {
  return setting === 'none' ? 0 : Math.max(1, Math.ceil(setting / 1000));
}
