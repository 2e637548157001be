import { ControlError } from '../control/control-error.js';
import type { CompiledResource } from './compile.js';
import type { ResourceEngine } from './engine.js';
import { BadInput } from './form.js';
import { compileFilters } from './list.js';
import type { HistoryEntry, StoredObject } from './store.js';

/**
 * The collections as the admin API, `server.resources` and `mockapi resources list` see them:
 * what each holds, one object, its history, and changes made without an API call (add, replace
 * the collection, empty it). The same functions answer the HTTP routes and the calls in process.
 */

type Obj = Record<string, unknown>;

/** A collection in `GET /__mockapi/resources`. */
export interface CollectionInfo {
  name: string;
  style: string;
  path: string;
  count: number;
}

/** A collection's objects, and, when asked, each object's history by id. */
export interface CollectionContents {
  name: string;
  style: string;
  path: string;
  objects: unknown[];
  history?: Record<string, readonly HistoryEntry[]>;
}

const parse = (object: StoredObject): unknown => JSON.parse(object.text);

export class ResourceAdmin {
  constructor(private readonly engine: ResourceEngine) {}

  private resource(name: string): CompiledResource {
    const resource = this.engine.collection(name);
    if (resource === undefined) {
      const known = this.engine.collections.map((c) => c.name);
      throw new ControlError(
        404,
        'not_found',
        `no resource named "${name}" in the config${known.length === 0 ? '' : ` (resources: ${known.join(', ')})`}`,
      );
    }
    return resource;
  }

  private async ready(scope: string, resource: CompiledResource): Promise<void> {
    await this.engine.seeder.ensure(scope, resource.name);
    await this.engine.lifecycle.runDue(this.engine.options.clock());
  }

  /** Every collection with how many objects it holds. */
  async summary(scope: string): Promise<CollectionInfo[]> {
    const out: CollectionInfo[] = [];
    for (const resource of this.engine.collections) {
      await this.ready(scope, resource);
      const count = await this.engine.store.collection(scope, resource.name).count({});
      out.push({ name: resource.name, style: resource.style.name, path: resource.config.path, count });
    }
    return out;
  }

  /** A collection's objects, oldest first, those matching `filter` (query parameters) only. */
  async contents(scope: string, name: string, filter: Obj = {}, withHistory = false): Promise<CollectionContents> {
    const resource = this.resource(name);
    await this.ready(scope, resource);
    const coll = this.engine.store.collection(scope, name);
    const test = compileFilters(filter);
    const all = (await coll.all()).filter((object) => test === undefined || test(object));
    const contents: CollectionContents = {
      name,
      style: resource.style.name,
      path: resource.config.path,
      objects: all.map(parse),
    };
    if (withHistory) {
      const history: Record<string, readonly HistoryEntry[]> = {};
      for (const object of all) history[object.id] = await coll.history(object.id);
      contents.history = history;
    }
    return contents;
  }

  /** One object, or a 404. */
  async object(scope: string, name: string, id: string): Promise<unknown> {
    const resource = this.resource(name);
    await this.ready(scope, resource);
    if (resource.moves.length > 0) await this.engine.lifecycle.catchUp(scope, resource, id, this.engine.now(scope));
    const found = await this.engine.store.collection(scope, name).get(id);
    if (found === undefined) throw new ControlError(404, 'not_found', `no object "${id}" in resources.${name}`);
    return parse(found);
  }

  /** Adds one object over the collection's `fields` (its own id or a new one). */
  async add(scope: string, name: string, item: unknown): Promise<unknown> {
    const resource = this.resource(name);
    if (item === null || typeof item !== 'object' || Array.isArray(item))
      throw new ControlError(400, 'bad_request', 'the body must be a JSON object: the object to add');
    await this.ready(scope, resource);
    const stored = await this.adding(scope, resource, item as Obj);
    if (stored === undefined)
      throw new ControlError(
        409,
        'conflict',
        `resources.${name} already has an object with id ${JSON.stringify((item as Obj).id)}`,
      );
    return parse(stored);
  }

  private async adding(scope: string, resource: CompiledResource, item: Obj): Promise<StoredObject | undefined> {
    try {
      return await this.engine.seeder.add(scope, resource, item, 'admin');
    } catch (err) {
      if (err instanceof BadInput) throw new ControlError(400, 'bad_request', err.message);
      throw err;
    }
  }

  /** Replaces the collection with `items` (a JSON array of objects), each over `fields`. */
  async replace(scope: string, name: string, items: unknown): Promise<CollectionContents> {
    const resource = this.resource(name);
    if (
      !Array.isArray(items) ||
      items.some((item) => item === null || typeof item !== 'object' || Array.isArray(item))
    ) {
      throw new ControlError(
        400,
        'bad_request',
        'the body must be a JSON array of objects: the new contents of the collection',
      );
    }
    const ids = items
      .map((item) => (item as Obj).id)
      .filter((id) => id !== undefined)
      .map(String);
    // (checked before the collection is emptied, as adding would refuse it)
    if (ids.includes('')) throw new ControlError(400, 'bad_request', 'the id must not be empty');
    const twice = firstRepeated(ids);
    if (twice !== undefined)
      throw new ControlError(400, 'bad_request', `the id ${JSON.stringify(twice)} is given twice`);
    await this.clear(scope, name);
    for (const item of items) await this.adding(scope, resource, item as Obj);
    return this.contents(scope, name);
  }

  /** Empties the collection (its seed comes back only with a reset). */
  async clear(scope: string, name: string): Promise<CollectionContents> {
    const resource = this.resource(name);
    await this.engine.store.clear(scope, [name]);
    await this.engine.store.markSeeded(scope, name);
    this.engine.view.touch(scope, name);
    return { name, style: resource.style.name, path: resource.config.path, objects: [] };
  }
}

/** The first id given a second time (a Set: 100,000 ids take milliseconds, not minutes). */
function firstRepeated(ids: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) return id;
    seen.add(id);
  }
  return undefined;
}
