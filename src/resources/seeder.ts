import type { CompiledResource } from './compile.js';
import { ResourceContext } from './context.js';
import type { ResourceEngine, ResourceEngineOptions } from './engine.js';
import { BadInput, checkKeys } from './form.js';
import { mergeFields } from './merge.js';
import type { HistoryEntry, StoredObject } from './store.js';

type Obj = Record<string, unknown>;

/**
 * The objects that exist without a request: each collection's `seed` (once per scope: at start,
 * on first use of a session, after a reset) and those the admin API and `server.resources` add.
 * Each is laid over the collection's `fields`, as a created object is.
 */
export class Seeder {
  /** Collections known to be seeded, by scope (the store is asked once each); by scope, then name, so a request's check joins no key. */
  private readonly known = new Map<string, Set<string>>();

  constructor(
    private readonly engine: ResourceEngine,
    private readonly options: ResourceEngineOptions,
  ) {}

  /** Seeds the collection in the scope unless it was (undefined, at once, when it is known to be). */
  ensure(scope: string, name: string): Promise<void> | undefined {
    return this.known.get(scope)?.has(name) === true ? undefined : this.seed(scope, name);
  }

  private async seed(scope: string, name: string): Promise<void> {
    const resource = this.engine.collection(name);
    if (resource !== undefined && (await this.options.store.markSeeded(scope, name))) {
      for (const item of resource.config.seed) await this.add(scope, resource, item, 'seeded');
    }
    let names = this.known.get(scope);
    if (names === undefined) this.known.set(scope, (names = new Set()));
    names.add(name);
  }

  /** Seeds every collection configured now. */
  async seedAll(scope: string): Promise<void> {
    for (const resource of this.engine.collections) await this.ensure(scope, resource.name);
  }

  /** Forgets what was seeded in every scope (a shared store connected again may have lost it). */
  forgetAll(): void {
    this.known.clear();
  }

  /** Forgets what was seeded in the scope (a reset empties it). */
  forget(scope: string): void {
    this.known.delete(scope);
  }

  /**
   * Adds an object without an API call: `item` over the collection's `fields`, its own `id` or a
   * new one. Resolves to the stored object, or undefined when the id is taken; an empty id or a
   * key that reaches a prototype throws {@link BadInput}.
   */
  async add(
    scope: string,
    resource: CompiledResource,
    item: Obj,
    kind: HistoryEntry['kind'],
    parent = '',
  ): Promise<StoredObject | undefined> {
    checkKeys(item);
    const coll = this.options.store.collection(scope, resource.name);
    const n = (await coll.lastSeq()) + 1;
    const now = this.engine.now(scope);
    const ctx = new ResourceContext({
      params: {},
      query: '',
      headers: {},
      body: item,
      n,
      now,
      state: this.options.states?.(scope) ?? {},
      seed: this.options.seed(),
      randomKey: resource.randomKey,
      resources: this.engine.view.of(scope, this.engine.names),
    });
    const { id: given, ...fields } = item;
    if (given === '') throw new BadInput('the id must not be empty', 'id'); // no path could reach it
    const id = typeof given === 'string' || typeof given === 'number' ? given : resource.makeId(ctx, n);
    const merged = mergeFields(resource.defaults(ctx, id), fields);
    delete merged.id;
    const object = { id, ...merged };
    const stored = await coll.create(
      { id: String(id), text: JSON.stringify(object), parent, since: now, created: now },
      { at: now, kind },
    );
    if (stored !== undefined) await this.engine.written(scope, resource, stored);
    return stored;
  }
}
