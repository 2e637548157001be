import FindMyWay from 'find-my-way';

/** A route of the config: an endpoint's method and path pattern. */
export interface Route {
  readonly method: string;
  readonly path: string;
}

/**
 * Finds the route for a method and a path relative to `/mock` (query string already removed), as
 * its index in the routes the router was built from. An index rather than the endpoint itself, so
 * a reload that keeps every route can keep the router too (see {@link sameRoutes}).
 */
export interface Router {
  match(method: string, path: string): number | undefined;
}

// find-my-way refuses a `:param` longer than its maxParamLength (default 100) with a plain miss,
// which the handler could only answer with a wrong 404. The limit exists to bound the input of
// regex params, and route paths cannot have any (route-path.ts); what bounds a param here
// is the request line, which node:http caps with the 16 KiB header limit (431 beyond it). So no
// limit of our own: any param the request line can carry matches.
const MAX_PARAM_LENGTH = Number.MAX_SAFE_INTEGER;
// The memo of recent matches: at most this many paths per method, each at most this long, so it
// holds at most 1024 × 256 characters per method whatever clients send.
const MEMO_SIZE = 1024;
const MEMO_PATH_LENGTH = 256;

/**
 * Builds a radix-tree router (find-my-way) over the endpoints: `:name` segments, a trailing `*`,
 * case-sensitive, trailing slash ignored. A HEAD request falls back to the GET endpoint of the
 * same path when no HEAD endpoint exists.
 *
 * A trailing `*` matches any rest, the empty one included: `/files/*` answers `/files`, `/files/`
 * and `/files/a/b` (find-my-way's own `*` needs the slash, so `/files` would be a 404). Unless
 * an endpoint of the same method has exactly the path before the `*`: that one answers it.
 */
export function createRouter(routes: readonly Route[]): Router {
  const router = FindMyWay({
    caseSensitive: true,
    ignoreTrailingSlash: true,
    maxParamLength: MAX_PARAM_LENGTH,
    defaultRoute: () => {},
  });
  const noop = () => {};
  // boxed: find-my-way keeps no falsy store, and index 0 is one
  routes.forEach((route, index) => router.on(route.method as FindMyWay.HTTPMethod, route.path, noop, { index }));
  // Second, so every route of the config is in first and wins over a wildcard's empty rest.
  routes.forEach((route, index) => {
    const bare = emptyRestPath(route.path);
    if (bare === undefined || router.hasRoute(route.method as FindMyWay.HTTPMethod, bare)) return;
    try {
      router.on(route.method as FindMyWay.HTTPMethod, bare, noop, { index });
    } catch {
      // `/a/:id/*` beside a route `/a/:name`: the same path in find-my-way's eyes, already taken.
    }
  });

  function find(method: string, path: string): number | undefined {
    try {
      const found = router.find(method as FindMyWay.HTTPMethod, path);
      return (found?.store as { index: number } | null | undefined)?.index;
    } catch {
      return undefined; // an unknown method or an undecodable path matches nothing
    }
  }

  function lookup(method: string, path: string): number | undefined {
    const found = find(method, path);
    if (found !== undefined || method !== 'HEAD') return found;
    return find('GET', path);
  }

  // Clients of a mock API ask for the same few paths again and again, and a Map lookup costs a
  // third of a walk down the tree. Only matches are remembered (a scan of unknown paths does not
  // push them out); when a method's memo is full it starts again empty. The memo belongs to this
  // router, which never changes: a reload with other routes builds a new router.
  const memo = new Map<string, Map<string, number>>();
  return {
    match(method, path) {
      const paths = memo.get(method);
      const known = paths?.get(path);
      if (known !== undefined) return known;
      const found = lookup(method, path);
      if (found === undefined || path.length > MEMO_PATH_LENGTH) return found;
      if (paths === undefined) memo.set(method, new Map([[path, found]]));
      else {
        if (paths.size >= MEMO_SIZE) paths.clear();
        paths.set(path, found);
      }
      return found;
    },
  };
}

/**
 * The path a wildcard route also answers with an empty rest — `/files` for `/files/*` — or
 * undefined for a route without a trailing `*`, and for `/*`, whose empty rest `/` find-my-way
 * already matches.
 */
function emptyRestPath(path: string): string | undefined {
  if (!path.endsWith('/*') || path.length === 2) return undefined;
  return path.slice(0, -2);
}

/** Whether two route lists are the same routes in the same order: then one's router serves the other. */
export function sameRoutes(a: readonly Route[], b: readonly Route[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if ((a[i] as Route).method !== (b[i] as Route).method || (a[i] as Route).path !== (b[i] as Route).path)
      return false;
  }
  return true;
}
