/**
 * The control plane's usage: the default key's figures (this process's, or the store's with one),
 * its meters, every key's of `keys:`, and the `usage` event that carries them.
 */
import type { RateLimitStatus } from '../pipeline/rate-limit.js';
import { monthOf } from '../state/state-file.js';
import type { ControlEvent, ControlPlaneDeps, UsageReport } from './control-types.js';
import { gateMeters, keyUsage, keysUsage, meterUsage } from './key-usage.js';

/** What `GET /__mockapi/usage` answers: the default key's figures, and every key's when the config lists `keys:`. */
export function usageReport(deps: ControlPlaneDeps): UsageReport | Promise<UsageReport> {
  const now = deps.clock();
  const config = deps.runtime.holder.current.config;
  const base = defaultUsage(deps, now);
  if (config.keys === undefined || deps.keyLimits === undefined) return base;
  const keyLimits = deps.keyLimits;
  return Promise.resolve(base).then(async (own) => ({ ...own, keys: await keysUsage(config, keyLimits, now, own) }));
}

/** A `usage` event with what {@link usageReport} answers (never rejects: the store's read falls back). */
export function emitUsage(deps: ControlPlaneDeps, emit: (event: ControlEvent) => void): void {
  const next = usageReport(deps);
  if (next instanceof Promise) void next.then((data) => emit({ type: 'usage', data }));
  else emit({ type: 'usage', data: next });
}

function report(
  deps: ControlPlaneDeps,
  month: string,
  requests: number,
  rate: RateLimitStatus | undefined,
): UsageReport {
  // The default key's figures, without the `plan` field a key of `keys:` adds.
  const { plan: _plan, ...figures } = keyUsage(
    month,
    requests,
    deps.runtime.holder.current.config.limits.monthlyQuota,
    rate,
    null,
  );
  return figures;
}

/** The figures of `apiKey` (the key named `default`): the usage body as a config without `keys:` has it. */
function defaultUsage(deps: ControlPlaneDeps, now: number): UsageReport | Promise<UsageReport> {
  const { limits } = deps;
  const { limits: configured } = deps.runtime.holder.current.config;
  if (!limits.shared) {
    const own = report(deps, monthOf(now), deps.usage.count(now), limits.rateStatus(configured, now));
    return configured.meters === undefined
      ? own
      : { ...own, meters: meterUsage(limits.meters.status(configured.meters, now), own.month) };
  }
  // Every server's month and the shared window, not this process's (which counts nothing with a store).
  // When Redis answered, the figures are the store's; when not, this server's last known ones
  // (see `SharedUsage`), and storeReachable() says so.
  return limits.usage(configured, now).then(async (shared) => {
    const own = report(deps, shared.month, shared.requests, shared.rate);
    const meters = await gateMeters(limits, configured, now, shared.month);
    return meters === undefined ? own : { ...own, meters };
  });
}
