import type { AdminCall } from '../stubs/calls.js';
import type { CollectionContents, CollectionInfo, ResourceAdmin } from './admin.js';
import { readResourceFilter, resourceBodyOf } from './admin-input.js';

/** The calls on one collection: `server.resources.customers.create({ email })`. */
export interface CollectionCalls<T = Record<string, unknown>> {
  /** Adds an object without an API call (laid over the collection's `fields`; its own `id` or a new one). */
  create(object: Partial<T> & Record<string, unknown>): Promise<T>;
  /** One object by id; rejects with a 404 when there is none. */
  get(id: string): Promise<T>;
  /** The objects, oldest first; `filter` keeps those whose fields have these values (as a list's query filters). */
  list(filter?: Record<string, string | number | boolean | null>): Promise<T[]>;
  /** Replaces every object of the collection. */
  replace(objects: ReadonlyArray<Record<string, unknown>>): Promise<T[]>;
  /** Empties the collection (its `seed` comes back with a reset). */
  clear(): Promise<void>;
}

/**
 * The collections of a server, by name (`server.resources.customers`), on `startMockServer`'s
 * object and on `connectMockServer` alike; `list()` of the object itself would clash with a
 * collection's name, so the summary is `server.resourceCollections()`.
 */
export type ResourceCalls = Readonly<Record<string, CollectionCalls>>;

/** How each collection's calls are made: in process or over HTTP. */
interface CallsOf {
  contents(name: string, filter: Record<string, unknown>): Promise<CollectionContents>;
  object(name: string, id: string): Promise<unknown>;
  add(name: string, object: unknown): Promise<unknown>;
  replace(name: string, objects: unknown): Promise<CollectionContents>;
  clear(name: string): Promise<unknown>;
}

function filterText(filter: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(filter).map(([key, value]) => [key, value === null ? 'null' : String(value)]),
  );
}

function collectionCalls(of: CallsOf, name: string): CollectionCalls {
  return {
    create: async (object) => (await of.add(name, object)) as Record<string, unknown>,
    get: async (id) => (await of.object(name, id)) as Record<string, unknown>,
    list: async (filter = {}) =>
      (await of.contents(name, filterText(filter))).objects as Array<Record<string, unknown>>,
    replace: async (objects) => (await of.replace(name, objects)).objects as Array<Record<string, unknown>>,
    clear: async () => {
      await of.clear(name);
    },
  };
}

/** Names never taken for a collection: promises and inspection look them up. */
const NOT_NAMES = new Set([
  'then',
  'catch',
  'finally',
  'toJSON',
  'constructor',
  'inspect',
  'asymmetricMatch',
  'nodeType',
  '$$typeof',
]);

function byName(of: CallsOf): ResourceCalls {
  const made = new Map<string, CollectionCalls>();
  return new Proxy({} as Record<string, CollectionCalls>, {
    get(_target, key) {
      if (typeof key !== 'string' || NOT_NAMES.has(key)) return undefined;
      let calls = made.get(key);
      if (calls === undefined) made.set(key, (calls = collectionCalls(of, key)));
      return calls;
    },
  });
}

/**
 * The calls in process, over the server's {@link ResourceAdmin} (the default session). Each reads its
 * id, filter and body as the admin route reads what `connectMockServer` sends (src/resources/admin-input.ts):
 * the same 400 for a body that is not JSON, reaches a prototype or nests too deep, the same 413 for
 * one too large, the same filter from the same parameters.
 */
export function resourceCalls(admin: ResourceAdmin): {
  resources: ResourceCalls;
  resourceCollections(): Promise<CollectionInfo[]>;
} {
  const of: CallsOf = {
    contents: async (name, filter) =>
      admin.contents('', name, readResourceFilter(new URLSearchParams(filter as Record<string, string>))),
    object: async (name, id) => admin.object('', name, String(id)),
    add: async (name, object) => admin.add('', name, resourceBodyOf(object)),
    replace: async (name, objects) => admin.replace('', name, resourceBodyOf(objects)),
    clear: (name) => admin.clear('', name),
  };
  return { resources: byName(of), resourceCollections: () => admin.summary('') };
}

/** The calls over HTTP (`connectMockServer`). */
export function httpResourceCalls(call: AdminCall): {
  resources: ResourceCalls;
  resourceCollections(): Promise<CollectionInfo[]>;
} {
  const at = (name: string, id?: string): string =>
    `resources/${encodeURIComponent(name)}${id === undefined ? '' : `/${encodeURIComponent(id)}`}`;
  const of: CallsOf = {
    contents: (name, filter) => {
      const query = new URLSearchParams(filter as Record<string, string>).toString();
      return call<CollectionContents>('GET', `${at(name)}${query === '' ? '' : `?${query}`}`);
    },
    object: (name, id) => call('GET', at(name, id)),
    add: (name, object) => call('POST', at(name), object),
    replace: (name, objects) => call<CollectionContents>('PUT', at(name), objects),
    clear: (name) => call('DELETE', at(name)),
  };
  return {
    resources: byName(of),
    resourceCollections: async () => (await call<{ resources: CollectionInfo[] }>('GET', 'resources')).resources,
  };
}
