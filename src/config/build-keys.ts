import {
  METER_SCALE,
  type CostConfig,
  type LimitsConfig,
  type MeterConfig,
  type NamedKeyConfig,
  type RateLimitConfig,
} from './types.js';
import { parseDuration } from './units.js';

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A validated `rateLimit` mapping as milliseconds; undefined when absent or null. */
export function buildRateLimit(raw: unknown): RateLimitConfig | undefined {
  if (!isObject(raw)) return undefined;
  return { requests: raw.requests as number, windowMs: parseDuration(raw.window) as number };
}

/** Validated `meters:` in the order written, limits in millionths; undefined when absent or empty. */
export function buildMeters(raw: unknown): MeterConfig[] | undefined {
  if (!isObject(raw)) return undefined;
  const meters = Object.entries(raw).map(([name, value]): MeterConfig => {
    const m = value as Obj;
    const period = m.window === 'month' || m.window === 'total' ? m.window : 'window';
    const meter: MeterConfig = {
      name,
      limit: Math.round((m.limit as number) * METER_SCALE),
      period,
      windowMs: period === 'window' ? (parseDuration(m.window) as number) : 0,
      exhausted: m.exhausted === 'insufficientQuota' ? 'insufficientQuota' : 'quotaExceeded',
    };
    if (typeof m.headerName === 'string') meter.headerName = m.headerName;
    return meter;
  });
  return meters.length === 0 ? undefined : meters;
}

/** An endpoint's validated `cost:`, by meter in the order written; undefined when absent or empty. */
export function buildCost(raw: unknown): CostConfig[] | undefined {
  if (!isObject(raw)) return undefined;
  const cost = Object.entries(raw).map(([meter, value]): CostConfig => {
    if (!isObject(value)) return { meter, settle: value as number | string };
    const one: CostConfig = { meter };
    if (typeof value.reserve === 'number' || typeof value.reserve === 'string') one.reserve = value.reserve;
    if (typeof value.settle === 'number' || typeof value.settle === 'string') one.settle = value.settle;
    return one;
  });
  return cost.length === 0 ? undefined : cost;
}

/**
 * The keys of `keys:` with the limits each one is held to: `limits` with the plan's `rateLimit`,
 * `monthlyQuota` and `meters` in place of its own (a plan without one of them has none). Undefined when `keys:`
 * lists none. `raw` passed the schema and the key rules (names, plans and keys unique and known).
 */
export function buildNamedKeys(
  rawKeys: unknown,
  rawPlans: unknown,
  limits: LimitsConfig,
): NamedKeyConfig[] | undefined {
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
      delete own.meters;
      const rateLimit = buildRateLimit(plan.rateLimit);
      if (rateLimit !== undefined) own.rateLimit = rateLimit;
      if (typeof plan.monthlyQuota === 'number') own.monthlyQuota = plan.monthlyQuota;
      const meters = buildMeters(plan.meters);
      if (meters !== undefined) own.meters = meters;
      entry.limits = own;
    }
    return entry;
  });
}
