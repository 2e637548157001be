import type { Config } from '../config/types.js';

/** Why `serve --workers` cannot serve `config` without a shared store, in two lines: what needs one, and the way out. */
export interface StoreNeed {
  /** `--workers needs a shared store when limits are configured (…):` */
  why: string;
  /** `set limits.store or pass --store …, or run without --workers (each worker would keep limits of its own)` */
  remedy: string;
}

/**
 * What in `config` needs a shared store under `serve --workers` (limits of any kind): each worker
 * would otherwise keep counts of its own. Undefined when nothing does. (Resources do not: without a
 * store the workers share the primary's objects, see resource-host.ts.)
 * Start-up refuses such a config (exit 2) and a worker's hot reload keeps the last good one, with
 * the same words.
 */
export function storeNeed(config: Pick<Config, 'limits' | 'keys' | 'endpoints'>): StoreNeed | undefined {
  const limited = (l: Config['limits']) =>
    l.rateLimit !== undefined || l.monthlyQuota !== undefined || l.meters !== undefined;
  const own = (what: string) =>
    `set limits.store or pass --store redis://host:port/db, or run without --workers (each worker would keep ${what} of its own)`;
  if (limited(config.limits))
    return {
      why: '--workers needs a shared store when limits are configured (limits.rateLimit, limits.monthlyQuota, limits.meters):',
      remedy: own('limits'),
    };
  if ((config.keys ?? []).some((k) => limited(k.limits)))
    return {
      why: '--workers needs a shared store when a plan of keys: sets limits (rateLimit, monthlyQuota, meters):',
      remedy: own('limits'),
    };
  if (config.endpoints.some((e) => e.rateLimit !== undefined))
    return {
      why: '--workers needs a shared store when an endpoint sets limits (endpoints[].limits.rateLimit):',
      remedy: own('limits'),
    };
  return undefined;
}
