import type { Config, LimitsConfig } from '../config/types.js';
import { DEFAULT_KEY_NAME, METER_SCALE } from '../config/types.js';
import type { KeyLimits } from '../pipeline/key-limits.js';
import type { LimitGate, LimitParts, StoreLimitGate } from '../pipeline/limits.js';
import { windowText, type MeterStatus } from '../pipeline/meters.js';
import type { RateLimitStatus } from '../pipeline/rate-limit.js';
import { monthOf } from '../state/state-file.js';
import { ControlError } from './control-error.js';

/** One key's figures in `GET /__mockapi/usage`'s `keys` (by name; never the key itself). */
export interface KeyUsage {
  month: string;
  requests: number;
  quota: number | null;
  remaining: number | null;
  rateLimit: { limit: number; remaining: number; resetSeconds: number } | null;
  /** The key's plan, or null when `limits` applies. */
  plan: string | null;
  /** Each meter of the key's limits by name; absent when they have none. */
  meters?: Record<string, MeterUsage>;
}

/** One meter in `GET /__mockapi/usage` (amounts in the meter's unit). */
export interface MeterUsage {
  /** `1m`, `month` or `total`. */
  window: string;
  /** The month counted (UTC, `YYYY-MM`), for a `month` meter. */
  month?: string;
  limit: number;
  /** What the window (month, total) holds now. */
  used: number;
  remaining: number;
  /** Whole seconds until the oldest amount leaves the window, or the month ends; 0 for `total` or an empty window. */
  resetSeconds: number;
}

/** The meters of a key as `usage` shows them. */
export function meterUsage(statuses: readonly MeterStatus[], month: string): Record<string, MeterUsage> {
  const out: Record<string, MeterUsage> = {};
  for (const { meter, used, resetMs } of statuses) {
    const figures: MeterUsage = {
      window: meter.period === 'window' ? windowText(meter.windowMs) : meter.period,
      limit: meter.limit / METER_SCALE,
      used: used / METER_SCALE,
      remaining: Math.max(0, meter.limit - used) / METER_SCALE,
      resetSeconds: Math.ceil(resetMs / 1000),
    };
    if (meter.period === 'month') figures.month = month;
    out[meter.name] = figures;
  }
  return out;
}

/** The meters of `limits` on `gate` (the store's, or this process's), as `usage` shows them; undefined without meters. */
export async function gateMeters(
  gate: LimitGate | StoreLimitGate,
  limits: LimitsConfig,
  now: number,
  month: string,
): Promise<Record<string, MeterUsage> | undefined> {
  if (limits.meters === undefined) return undefined;
  const statuses = gate.shared ? await gate.meterStatus(limits, now) : gate.meters.status(limits.meters, now);
  return meterUsage(statuses, month);
}

/** A key's figures from its month, its count and its window. */
export function keyUsage(
  month: string,
  requests: number,
  quota: number | undefined,
  rate: RateLimitStatus | undefined,
  plan: string | null,
): KeyUsage {
  return {
    month,
    requests,
    quota: quota ?? null,
    remaining: quota === undefined ? null : Math.max(0, quota - requests),
    rateLimit:
      rate === undefined ? null : { limit: rate.limit, remaining: rate.remaining, resetSeconds: rate.resetSeconds },
    plan,
  };
}

/**
 * The figures of every key of `keys:` by name, after `defaultUsage` (the `apiKey`'s, the body's own
 * figures) under `default`. Only asked when the config lists `keys:`.
 */
export async function keysUsage(
  config: Config,
  keyLimits: KeyLimits,
  now: number,
  defaultUsage: Omit<KeyUsage, 'plan'>,
): Promise<Record<string, KeyUsage>> {
  const { month, requests, quota, remaining, rateLimit, meters } = defaultUsage;
  const keys: Record<string, KeyUsage> = {
    [DEFAULT_KEY_NAME]: {
      month,
      requests,
      quota,
      remaining,
      rateLimit,
      plan: null,
      ...(meters === undefined ? {} : { meters }),
    },
  };
  for (const key of config.keys ?? []) {
    const parts = await keyLimits.parts(key.name);
    const plan = key.plan ?? null;
    let figures: KeyUsage;
    if (parts.gate.shared) {
      const shared = await parts.gate.usage(key.limits, now);
      figures = keyUsage(shared.month, shared.requests, key.limits.monthlyQuota, shared.rate, plan);
    } else {
      figures = keyUsage(
        monthOf(now),
        parts.usage.count(now),
        key.limits.monthlyQuota,
        parts.gate.rateStatus(key.limits, now),
        plan,
      );
    }
    const own = await gateMeters(parts.gate, key.limits, now, figures.month);
    keys[key.name] = own === undefined ? figures : { ...figures, meters: own };
  }
  return keys;
}

/** A reset's limit parts, for every named key made so far and the endpoint windows (this process's part; see {@link resetKeysInStore}). */
export function resetKeysHere(
  keyLimits: KeyLimits | undefined,
  parts: LimitParts,
  now: number,
  followed?: Promise<void>[],
): void {
  if (keyLimits === undefined) return;
  if (parts.rateLimit) keyLimits.resetEndpointWindows();
  for (const { gate, usage } of keyLimits.all().values()) {
    if (gate.shared) gate.forget(parts, now);
    else {
      // `followed`: another worker reset (and wrote) the month in the state file (see UsageStore.followReset).
      if (parts.usage) {
        if (followed === undefined) usage.reset(now);
        else followed.push(usage.followReset(now));
      }
      if (parts.rateLimit) gate.resetRateLimit();
      gate.meters.clear(parts.rateLimit, parts.usage);
    }
  }
}

/** A reset's limit parts in the shared store, for every key of `keys:`; rejects (a 503) when the store cannot apply them. */
export async function resetKeysInStore(
  config: Config,
  keyLimits: KeyLimits | undefined,
  parts: LimitParts,
): Promise<void> {
  if (keyLimits === undefined) return;
  for (const key of config.keys ?? []) {
    const { gate } = await keyLimits.parts(key.name);
    if (gate.shared) await gate.reset(parts);
  }
}

/**
 * `POST /__mockapi/usage` for the key named `name` of `keys:` (the `default` key is the caller's):
 * sets its month's count to `requests`. A 404 for a name the config does not list.
 */
export async function setKeyUsage(
  config: Config,
  keyLimits: KeyLimits | undefined,
  name: string,
  requests: number,
  now: number,
): Promise<void> {
  const names = [DEFAULT_KEY_NAME, ...(config.keys ?? []).map((k) => k.name)];
  if (keyLimits === undefined || !names.includes(name)) {
    throw new ControlError(
      404,
      'not_found',
      `no key named ${JSON.stringify(name)}; this config has the key${names.length === 1 ? '' : 's'} ${names.map((k) => `"${k}"`).join(', ')}`,
    );
  }
  const parts = await keyLimits.parts(name);
  if (parts.gate.shared)
    await parts.gate
      .setUsage(requests, now)
      .catch((err: Error) => Promise.reject(new ControlError(503, 'store_unavailable', err.message)));
  else parts.usage.set(now, requests);
}

/**
 * The key a `POST /__mockapi/usage {"meter"}` without `key` sets: the `default` key when its limits
 * have that meter, else the one key of `keys:` whose limits (its plan's) have it — the contract's
 * own call sets a meter declared on a plan. 400 when several keys have it (name one), the `default`
 * key's name when none does (its 404 follows).
 */
function meterKeyOf(config: Config, meterName: string): string {
  const has = (limits: Config['limits']): boolean => limits.meters?.some((m) => m.name === meterName) === true;
  if (has(config.limits)) return DEFAULT_KEY_NAME;
  const keys = (config.keys ?? []).filter((k) => has(k.limits)).map((k) => k.name);
  if (keys.length === 1) return keys[0]!;
  if (keys.length > 1)
    throw new ControlError(
      400,
      'bad_request',
      `the keys ${keys.map((k) => `"${k}"`).join(', ')} each have a meter named ${JSON.stringify(meterName)}: say which with "key"`,
    );
  return DEFAULT_KEY_NAME;
}

/**
 * `POST /__mockapi/usage {"meter","value","key"?}`: sets a meter of a key (its window holds `value`
 * now, or its month or total is `value`); without `key`, the key that has the meter (see
 * {@link meterKeyOf}). 404 for a key or meter the config does not have; 503 when a shared store
 * cannot be reached.
 */
export async function setMeterUsage(
  config: Config,
  defaultGate: LimitGate | StoreLimitGate,
  keyLimits: KeyLimits | undefined,
  key: string | undefined,
  meterName: string,
  value: number,
  now: number,
): Promise<void> {
  const name = key ?? meterKeyOf(config, meterName);
  const names = [DEFAULT_KEY_NAME, ...(config.keys ?? []).map((k) => k.name)];
  if (!names.includes(name))
    throw new ControlError(
      404,
      'not_found',
      `no key named ${JSON.stringify(name)}; this config has the key${names.length === 1 ? '' : 's'} ${names.map((k) => `"${k}"`).join(', ')}`,
    );
  const limits = name === DEFAULT_KEY_NAME ? config.limits : config.keys!.find((k) => k.name === name)!.limits;
  const meter = limits.meters?.find((m) => m.name === meterName);
  if (meter === undefined) {
    const known = (limits.meters ?? []).map((m) => `"${m.name}"`);
    throw new ControlError(
      404,
      'not_found',
      `the key "${name}" has no meter named ${JSON.stringify(meterName)}; ${known.length === 0 ? 'its limits have no meters' : `its meters are ${known.join(', ')}`}`,
    );
  }
  const units = Math.round(value * METER_SCALE);
  const gate = name === DEFAULT_KEY_NAME || keyLimits === undefined ? defaultGate : (await keyLimits.parts(name)).gate;
  if (!gate.shared) return gate.meters.set(meter, units, now);
  await gate
    .setMeter(meter, units)
    .catch((err: Error) => Promise.reject(new ControlError(503, 'store_unavailable', err.message)));
}
