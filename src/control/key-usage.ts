import type { Config } from '../config/types.js';
import { DEFAULT_KEY_NAME } from '../config/types.js';
import type { KeyLimits } from '../pipeline/key-limits.js';
import type { LimitParts } from '../pipeline/limits.js';
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
}

/** A key's figures from its month, its count and its window. */
export function keyUsage(month: string, requests: number, quota: number | undefined, rate: RateLimitStatus | undefined, plan: string | null): KeyUsage {
  return {
    month,
    requests,
    quota: quota ?? null,
    remaining: quota === undefined ? null : Math.max(0, quota - requests),
    rateLimit: rate === undefined ? null : { limit: rate.limit, remaining: rate.remaining, resetSeconds: rate.resetSeconds },
    plan,
  };
}

/**
 * The figures of every key of `keys:` by name, after `defaultUsage` (the `apiKey`'s, the body's own
 * figures) under `default`. Only asked when the config lists `keys:`.
 */
export async function keysUsage(config: Config, keyLimits: KeyLimits, now: number, defaultUsage: Omit<KeyUsage, 'plan'>): Promise<Record<string, KeyUsage>> {
  const { month, requests, quota, remaining, rateLimit } = defaultUsage;
  const keys: Record<string, KeyUsage> = { [DEFAULT_KEY_NAME]: { month, requests, quota, remaining, rateLimit, plan: null } };
  for (const key of config.keys ?? []) {
    const parts = await keyLimits.parts(key.name);
    const plan = key.plan ?? null;
    if (parts.gate.shared) {
      const shared = await parts.gate.usage(key.limits, now);
      keys[key.name] = keyUsage(shared.month, shared.requests, key.limits.monthlyQuota, shared.rate, plan);
    } else {
      keys[key.name] = keyUsage(monthOf(now), parts.usage.count(now), key.limits.monthlyQuota, parts.gate.rateStatus(key.limits, now), plan);
    }
  }
  return keys;
}

/** A reset's limit parts, for every named key made so far and the endpoint windows (this process's part; see {@link resetKeysInStore}). */
export function resetKeysHere(keyLimits: KeyLimits | undefined, parts: LimitParts, now: number): void {
  if (keyLimits === undefined) return;
  if (parts.rateLimit) keyLimits.resetEndpointWindows();
  for (const { gate, usage } of keyLimits.all().values()) {
    if (gate.shared) gate.forget(parts, now);
    else {
      if (parts.usage) usage.reset(now);
      if (parts.rateLimit) gate.resetRateLimit();
    }
  }
}

/** A reset's limit parts in the shared store, for every key of `keys:`; rejects (a 503) when the store cannot apply them. */
export async function resetKeysInStore(config: Config, keyLimits: KeyLimits | undefined, parts: LimitParts): Promise<void> {
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
export async function setKeyUsage(config: Config, keyLimits: KeyLimits | undefined, name: string, requests: number, now: number): Promise<void> {
  const names = [DEFAULT_KEY_NAME, ...(config.keys ?? []).map((k) => k.name)];
  if (keyLimits === undefined || !names.includes(name)) {
    throw new ControlError(404, 'not_found', `no key named ${JSON.stringify(name)}; this config has the key${names.length === 1 ? '' : 's'} ${names.map((k) => `"${k}"`).join(', ')}`);
  }
  const parts = await keyLimits.parts(name);
  if (parts.gate.shared) await parts.gate.setUsage(requests, now).catch((err: Error) => Promise.reject(new ControlError(503, 'store_unavailable', err.message)));
  else parts.usage.set(now, requests);
}
