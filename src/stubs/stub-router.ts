import FindMyWay from 'find-my-way';
import { routeShape } from '../route-path.js';

/** What the router holds of a stub: its route and its order (a higher `seq` is newer). */
export interface RoutedStub {
  readonly method: string;
  readonly path: string;
  readonly seq: number;
}

/** All stubs of one route (method and path shape), newest first. */
interface Slot<S extends RoutedStub> {
  readonly method: string;
  /** The path registered with find-my-way: the first stub's. */
  readonly path: string;
  readonly stack: S[];
  /** For a route with parameters or a wildcard: tests a request path, so newer routes that also match are found. */
  readonly test: ((path: string) => boolean) | undefined;
}

/** A router whose routes come and go at run time (stubs), each route a stack of stubs, newest first. */
export interface StubRouter<S extends RoutedStub> {
  add(stub: S): void;
  remove(stub: S): void;
  clear(): void;
  /** The newest stub whose route matches `method` and `path` (after `/mock`, no query string). */
  match(method: string, path: string): S | undefined;
  readonly size: number;
}

// As the config's router (pipeline/match.ts): params of any length the request line can carry.
const MAX_PARAM_LENGTH = Number.MAX_SAFE_INTEGER;
const noop = () => {};
// As the config's router: a memo of recent lookups, at most this many paths per method, each at most this long.
const MEMO_SIZE = 1024;
const MEMO_PATH_LENGTH = 256;
/** Empty routes kept at least this many before a rebuild (see `compact`). */
const MIN_COMPACT = 64;

/**
 * A find-my-way radix tree over the stubs' routes, so that 10,000 stubs cost a request to a config
 * endpoint one tree walk, as the config's own endpoints do. The tree picks the most specific route
 * (static over parameter over wildcard); a newer stub on a less specific route that also matches
 * wins over it (stubs match newest first), which only requests that match some stub check.
 */
export function createStubRouter<S extends RoutedStub>(): StubRouter<S> {
  const router = FindMyWay({
    caseSensitive: true,
    ignoreTrailingSlash: true,
    maxParamLength: MAX_PARAM_LENGTH,
    defaultRoute: noop,
  });
  const slots = new Map<string, Slot<S>>(); // by `METHOD shape`
  const generic = new Map<string, Set<Slot<S>>>(); // by method: slots with parameters or a wildcard
  let size = 0;
  let empty = 0; // registered routes without stubs
  // Request paths → the slot found (null: none), per method. Emptied by every change of the routes,
  // so a request to a config endpoint with stubs present costs a Map lookup, as the config's own.
  const memo = new Map<string, Map<string, Slot<S> | null>>();

  function register(slot: Slot<S>): void {
    const method = slot.method as FindMyWay.HTTPMethod;
    router.on(method, slot.path, noop, { slot });
    // `/files/*` also answers `/files` (as the config's router does), unless a route has that path.
    const bare = slot.path.endsWith('/*') && slot.path.length > 2 ? slot.path.slice(0, -2) : undefined;
    if (bare !== undefined && !router.hasRoute(method, bare)) {
      try {
        router.on(method, bare, noop, { slot });
      } catch {
        // the same path in find-my-way's eyes as a route already there
      }
    }
  }

  /**
   * Rebuilds the tree with the routes that still have stubs. find-my-way rebuilds its whole tree
   * on every `off`, so a route whose last stub goes stays registered, empty, until empty routes
   * outnumber the others: removing stubs one by one then costs O(1) each, amortised.
   */
  function compact(): void {
    router.reset();
    for (const [key, slot] of slots) {
      if (slot.stack.length > 0) register(slot);
      else {
        slots.delete(key);
        generic.get(slot.method)?.delete(slot);
      }
    }
    empty = 0;
  }

  function lookup(method: string, path: string): Slot<S> | undefined {
    try {
      return (router.find(method as FindMyWay.HTTPMethod, path)?.store as { slot?: Slot<S> } | null | undefined)?.slot;
    } catch {
      return undefined; // an unknown method or an undecodable path matches nothing
    }
  }

  function find(method: string, path: string): Slot<S> | undefined {
    const paths = memo.get(method);
    const known = paths?.get(path);
    if (known !== undefined) return known ?? undefined;
    const found = lookup(method, path);
    if (path.length > MEMO_PATH_LENGTH) return found;
    if (paths === undefined) memo.set(method, new Map([[path, found ?? null]]));
    else {
      if (paths.size >= MEMO_SIZE) paths.clear();
      paths.set(path, found ?? null);
    }
    return found;
  }

  return {
    get size() {
      return size;
    },
    add(stub) {
      memo.clear();
      const key = `${stub.method} ${routeShape(stub.path)}`;
      let slot = slots.get(key);
      if (slot !== undefined && slot.stack.length === 0) empty--;
      if (slot === undefined) {
        const isGeneric = stub.path.includes(':') || stub.path.endsWith('*');
        slot = { method: stub.method, path: stub.path, stack: [], test: isGeneric ? pathTest(stub.path) : undefined };
        slots.set(key, slot);
        register(slot);
        if (slot.test !== undefined) {
          let set = generic.get(stub.method);
          if (set === undefined) generic.set(stub.method, (set = new Set()));
          set.add(slot);
        }
      }
      slot.stack.unshift(stub);
      size++;
    },
    remove(stub) {
      const key = `${stub.method} ${routeShape(stub.path)}`;
      const slot = slots.get(key);
      const at = slot?.stack.indexOf(stub) ?? -1;
      if (slot === undefined || at < 0) return;
      slot.stack.splice(at, 1);
      size--;
      if (slot.stack.length > 0) return;
      memo.clear();
      if (++empty > MIN_COMPACT && empty > slots.size - empty) compact();
    },
    clear() {
      memo.clear();
      router.reset();
      slots.clear();
      generic.clear();
      size = 0;
      empty = 0;
    },
    match(method, path) {
      if (size === 0) return undefined;
      const slot = find(method, path);
      if (slot === undefined) return undefined;
      let best = slot.stack[0];
      const others = generic.get(method);
      if (others === undefined) return best;
      // A newer stub on a less specific route; or, when the route found has no stubs left, any.
      for (const other of others) {
        const top = other.stack[0];
        if (other !== slot && top !== undefined && (best === undefined || top.seq > best.seq) && other.test!(path))
          best = top;
      }
      return best;
    },
  };
}

/** A test of request paths against a route with `:params` and a trailing `*`, as find-my-way matches them. */
function pathTest(route: string): (path: string) => boolean {
  const trimmed = route.length > 1 && route.endsWith('/') ? route.slice(0, -1) : route;
  const segments = trimmed.split('/').slice(1);
  const wildcard = segments[segments.length - 1] === '*';
  if (wildcard) segments.pop();
  const body = segments
    .map((s) => (s.startsWith(':') ? '/[^/]+' : `/${s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`))
    .join('');
  const pattern = new RegExp(`^${body}${wildcard ? '(?:/.*)?' : '/?'}$`);
  return (path) => pattern.test(path);
}
