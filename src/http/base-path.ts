import type { Router } from '../pipeline/match.js';

/** mockapi's own paths (health, admin API, inspector): never mock paths, whatever `server.basePath` is. */
const RESERVED_PATH = '/__mockapi';
const RESERVED_PREFIX = '/__mockapi/';

/** What the base path is, as compiled: `basePath` without its trailing `/` (`` for the root), and `basePath/`. */
export interface BasePath {
  readonly basePath: string;
  readonly basePrefix: string;
}

function isReserved(path: string): boolean {
  return path === RESERVED_PATH || path.startsWith(RESERVED_PREFIX);
}

/**
 * The request path after `server.basePath` (`/mock/users/42` → `/users/42` by default; the whole
 * path for `/`), or undefined outside it. `/__mockapi` and what is under it are never mock paths.
 */
export function mockPathOf(base: BasePath, path: string): string | undefined {
  const { basePath, basePrefix } = base;
  if (path.startsWith(basePrefix)) {
    if (basePath === '') return isReserved(path) ? undefined : path;
    return path.slice(basePath.length);
  }
  return path === basePath ? '/' : undefined;
}

/**
 * For a request outside the base path that an endpoint would answer under it, the note the log
 * line and the journal entry carry: `served under /mock: did you mean /mock/products?`.
 */
export function servedUnderNote(
  base: BasePath & { readonly router: Router },
  method: string,
  path: string,
): string | undefined {
  if (isReserved(path) || base.router.match(method, path) === undefined) return undefined;
  return `served under ${base.basePath === '' ? '/' : base.basePath}: did you mean ${base.basePath}${path}?`;
}
