import type { ResourceView } from '../expression/context.js';
import type { ResourceStore, StoredObject } from './store.js';

/**
 * `resources.<name>` for expressions: a collection's objects, oldest first, parsed once per
 * change of the collection (a write bumps its stamp). A shared store answers later, so its
 * collections are loaded ({@link CollectionsView.load}) before expressions that read them run.
 */
export class CollectionsView {
  /** Each collection's count of writes, by scope then name (a write joins no key to bump it). */
  private readonly stamps = new Map<string, Map<string, number>>();
  private readonly cache = new Map<string, { stamp: number; objects: readonly unknown[] }>();

  constructor(private readonly store: ResourceStore) {}

  /** A collection changed (a write through this process). */
  touch(scope: string, name: string): void {
    let stamps = this.stamps.get(scope);
    if (stamps === undefined) this.stamps.set(scope, (stamps = new Map()));
    stamps.set(name, (stamps.get(name) ?? 0) + 1);
  }

  /** Forgets every cached collection of the scope. */
  forget(scope: string): void {
    for (const key of [...this.cache.keys()]) if (key.startsWith(`${scope}\u0000`)) this.cache.delete(key);
  }

  /** Forgets every cached collection. */
  forgetAll(): void {
    this.cache.clear();
  }

  /** Loads the named collections of a shared store (a no-op in memory, which answers at once). */
  async load(scope: string, names: readonly string[]): Promise<void> {
    if (!this.store.shared) return;
    await Promise.all(
      names.map(async (name) => {
        const all = await this.store.collection(scope, name).all();
        this.cache.set(`${scope}\u0000${name}`, { stamp: -1, objects: all.map(parse) });
      }),
    );
  }

  private readonly views = new Map<string, ResourceView>();

  /** The view of one scope (kept: answers ask for it on every request), with the collections configured now. */
  scoped(scope: string, known: () => ReadonlySet<string>): ResourceView {
    let view = this.views.get(scope);
    if (view === undefined) {
      if (this.views.size > 10_000) this.views.clear();
      view = { collection: (name) => this.of(scope, known()).collection(name) };
      this.views.set(scope, view);
    }
    return view;
  }

  /** The view of one scope, with the collections `known` (the names configured now). */
  of(scope: string, known: ReadonlySet<string>): ResourceView {
    return {
      collection: (name) => {
        if (!known.has(name)) return undefined;
        const key = `${scope}\u0000${name}`;
        const cached = this.cache.get(key);
        if (this.store.shared) return cached?.objects ?? [];
        const stamp = this.stamps.get(scope)?.get(name) ?? 0;
        if (cached !== undefined && cached.stamp === stamp) return cached.objects;
        const all = this.store.collection(scope, name).all();
        if (all instanceof Promise) return [];
        const objects = Object.freeze(all.map(parse));
        this.cache.set(key, { stamp, objects });
        return objects;
      },
    };
  }
}

function parse(object: StoredObject): unknown {
  return Object.freeze(JSON.parse(object.text));
}
