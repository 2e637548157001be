import type { LimitsConfig, NamedKeyConfig, RateLimitConfig } from './types.js';
import { parseDuration } from './units.js';

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A validated `rateLimit` mapping as milliseconds; undefined when absent or null. */
export function buildRateLimit(raw: unknown): RateLimitConfig | undefined {
  if (!isObject(raw)) return undefined;
  return { requests: raw.requests as number, windowMs: parseDuration(raw.window) as number };
}

/**
 * The keys of `keys:` with the limits each one is held to: `limits` with the plan's `rateLimit` and
 * `monthlyQuota` in place of its own (a plan without one of them has none). Undefined when `keys:`
 * lists none. `raw` passed the schema and the key rules (names, plans and keys unique and known).
 */
export function buildNamedKeys(rawKeys: unknown, rawPlans: unknown, limits: LimitsConfig): NamedKeyConfig[] | undefined {
  if (!Array.isArray(rawKeys) || rawKeys.length === 0) return undefined;
  const plans = isObject(rawPlans) ? rawPlans : {};
  return rawKeys.map((item) => {
    const raw = item as Obj;
    const entry: NamedKeyConfig = { name: raw.name as string, key: raw.key as string, limits };
    if (typeof raw.plan === 'string') {
      entry.plan = raw.plan;
      const plan = isObject(plans[raw.plan]) ? (plans[raw.plan] as Obj) : {};
      const own: LimitsConfig = { ...limits };
      delete own.rateLimit;
      delete own.monthlyQuota;
      const rateLimit = buildRateLimit(plan.rateLimit);
      if (rateLimit !== undefined) own.rateLimit = rateLimit;
      if (typeof plan.monthlyQuota === 'number') own.monthlyQuota = plan.monthlyQuota;
      entry.limits = own;
    }
    return entry;
  });
}
