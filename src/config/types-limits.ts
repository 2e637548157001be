/**
 * The loaded config's limits: a rate limit, a monthly quota, meters and the limit headers, as
 * `limits:` and each plan give them, and the named keys of `keys:` with the limits each one gets.
 * Part of the config's types; types.ts re-exports them.
 */

export interface RateLimitConfig {
  requests: number;
  windowMs: number;
}

/** A `limits.headers` style. */
export type LimitHeaderStyle = 'legacy' | 'ietf' | 'x' | 'none';

/** A `limitHeaders` style: a provider's names and formats. */
export type ProviderHeaderStyle = 'openai' | 'anthropic' | 'github' | 'ietf' | 'none';

/** Meter amounts are counted in millionths, as integers: exact sums (a double holds integers exactly up to 2^53). */
export const METER_SCALE = 1_000_000;

/** One meter of a plan (or of `limits`): at most `limit` in any window, month or ever. */
export interface MeterConfig {
  /** Its name in the config, `cost:`, usage and the journal. */
  name: string;
  /** The limit in millionths of the meter's unit (see {@link METER_SCALE}). */
  limit: number;
  /** `window`: an exact sliding window of `windowMs`; `month`: the calendar month (UTC); `total`: ever. */
  period: 'window' | 'month' | 'total';
  /** The sliding window's length; 0 for `month` and `total`. */
  windowMs: number;
  /** What a spent `month` or `total` meter answers. */
  exhausted: 'quotaExceeded' | 'insufficientQuota';
  /** Its name in the limit headers, when given (`headerName:`). */
  headerName?: string;
}

export interface LimitsConfig {
  rateLimit?: RateLimitConfig;
  monthlyQuota?: number;
  /** `limits.store`: the Redis URL that holds the limits shared by every server of the project. */
  store?: string;
  /** `limits.storeDown`: what mock requests get while the store cannot be reached. Absent = `closed`. */
  storeDown?: 'closed' | 'open';
  /** `limits.headers`, as a list without repeats; absent = `['legacy']`. */
  headers?: LimitHeaderStyle[];
  /** `limits.quotaRetryAfter`: absent = `until-reset`; milliseconds, or `none`. */
  quotaRetryAfter?: number | 'none';
  /** `meters:` of these limits (the plan's, or `limits.meters`), in the order written; absent = none. */
  meters?: MeterConfig[];
  /** The config's `limitHeaders:`, carried by every key's limits (the month's ietf item needs it); absent = none. */
  limitHeaders?: ProviderHeaderStyle[];
}

/** One key of `keys:` (never `apiKey`, the key named `default`). */
export interface NamedKeyConfig {
  /** Letters, digits, `_`, `-`; never `default`. Shown wherever a key is named; the key itself never is. */
  name: string;
  key: string;
  /** The plan named, when one is. */
  plan?: string;
  /** What limits this key: `limits` with the plan's `rateLimit`, `monthlyQuota` and `meters` in place of its own. */
  limits: LimitsConfig;
}

/** The name `apiKey` goes by. */
export const DEFAULT_KEY_NAME = 'default';
