import FindMyWay from 'find-my-way';
import type { CompiledEndpoint } from '../compile.js';

/** Finds the endpoint for a method and a path relative to `/mock` (query string already removed). */
export interface Router {
  match(method: string, path: string): CompiledEndpoint | undefined;
}

// Paths in configs are short; request segments longer than this still match a `:param`.
const MAX_PARAM_LENGTH = 8 * 1024;

/**
 * Builds a radix-tree router (find-my-way) over the endpoints: `:name` segments, a trailing `*`,
 * case-sensitive, trailing slash ignored. A HEAD request falls back to the GET endpoint of the
 * same path when no HEAD endpoint exists (SPEC §3).
 */
export function createRouter(endpoints: readonly CompiledEndpoint[]): Router {
  const router = FindMyWay({
    caseSensitive: true,
    ignoreTrailingSlash: true,
    maxParamLength: MAX_PARAM_LENGTH,
    defaultRoute: () => {},
  });
  const noop = () => {};
  for (const endpoint of endpoints) router.on(endpoint.method, endpoint.path, noop, endpoint);

  function find(method: string, path: string): CompiledEndpoint | undefined {
    try {
      const found = router.find(method as FindMyWay.HTTPMethod, path);
      return (found?.store as CompiledEndpoint | undefined) ?? undefined;
    } catch {
      return undefined; // an unknown method or an undecodable path matches nothing
    }
  }

  return {
    match(method, path) {
      const found = find(method, path);
      if (found !== undefined || method !== 'HEAD') return found;
      return find('GET', path);
    },
  };
}
