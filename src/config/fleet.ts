import { checkStoreUrl } from './store-url.js';

/**
 * `fleet.store`: the Redis of a fleet (src/fleet/), as written — a URL, or one with `${env.MOCKAPI_*}`
 * references (`${env.MOCKAPI_REDIS_URL}`, `${env.MOCKAPI_REDIS_URL ?? 'redis://127.0.0.1:6379'}`) —
 * and what it reads in the environment the config is loaded in.
 */

/** One `${env.MOCKAPI_NAME}` reference, with an optional `?? 'fallback'` (single or double quotes). */
const REFERENCE = /\$\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*(?:\?\?\s*(?:'([^']*)'|"([^"]*)")\s*)?\}/g;

/** What `fleet.store` reads: the URL (empty when a variable it needs is not set) and the variables missing. */
export interface FleetStore {
  url: string;
  missing: string[];
}

/** Says what is wrong with `fleet.store` as written, or undefined. */
export function fleetStoreProblem(text: string): string | undefined {
  if (!text.includes('${')) return checkStoreUrl(text);
  const rest = text.replace(REFERENCE, '');
  if (rest.includes('${'))
    return "may read the environment only, as ${env.MOCKAPI_REDIS_URL} or ${env.MOCKAPI_REDIS_URL ?? 'redis://127.0.0.1:6379'}";
  const wrong = [...text.matchAll(REFERENCE)].map((m) => m[1] as string).find((name) => !name.startsWith('MOCKAPI_'));
  if (wrong !== undefined) return `may only read environment variables named MOCKAPI_*, got ${wrong}`;
  return undefined;
}

/** The URL `fleet.store` names in `env`; `missing` lists the variables it needs that are not set (the URL is then empty). */
export function resolveFleetStore(text: string, env: Readonly<Record<string, string | undefined>>): FleetStore {
  const missing: string[] = [];
  const url = text.replace(REFERENCE, (_all, name: string, single: string | undefined, double: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    const fallback = single ?? double;
    if (fallback === undefined) missing.push(name);
    return fallback ?? '';
  });
  return { url: missing.length > 0 ? '' : url.trim(), missing };
}
