import type { CollectionStore, HistoryEntry, NewObject, Page, PageQuery, StoredObject } from '../resources/store.js';
import type { WireQuery } from './resource-host.js';
import type { Ask } from './resource-link.js';

/** Candidates asked for per round trip while a filtered page or count walks the collection. */
const BATCH = 500;

/**
 * One collection of a worker's store over IPC (resource-link.ts): each operation a request to the
 * primary. A filter (`PageQuery.test`, a function) cannot cross the channel: a filtered page or
 * count walks the collection in batches of candidates (the primary's order, parent and snapshot
 * applied there) and filters them here, as the Redis store does.
 */
export class LinkCollection implements CollectionStore {
  constructor(
    private readonly ask: Ask,
    private readonly scope: string,
    private readonly name: string,
    private readonly batch = BATCH,
  ) {}

  private op<T>(op: string, ...args: unknown[]): Promise<T> {
    return this.ask<T>(op, [this.scope, this.name, ...args]);
  }

  get(id: string): Promise<StoredObject | undefined> {
    return this.op('get', id);
  }

  create(object: NewObject, history: HistoryEntry): Promise<StoredObject | undefined> {
    return this.op('create', object, history);
  }

  replace(
    id: string,
    version: number,
    text: string,
    since: number,
    history: HistoryEntry,
  ): Promise<StoredObject | 'conflict' | undefined> {
    return this.op('replace', id, version, text, since, history);
  }

  delete(id: string): Promise<StoredObject | undefined> {
    return this.op('delete', id);
  }

  async page(query: PageQuery): Promise<Page | 'unknown-cursor'> {
    const { test, ...rest } = query;
    if (test === undefined) return this.op('page', rest);
    const items: StoredObject[] = [];
    let skip = query.skip ?? 0;
    let from: StoredObject | undefined;
    for (;;) {
      const batch = await this.candidates(query, query.after, from);
      if (batch === 'unknown-cursor') return batch;
      for (const object of batch.items) {
        if (!test(object)) continue;
        if (skip > 0) {
          skip--;
          continue;
        }
        if (items.length === query.limit) return { items, hasMore: true };
        items.push(object);
      }
      if (!batch.hasMore) return { items, hasMore: false };
      from = batch.items[batch.items.length - 1];
    }
  }

  /** The next batch of candidates in `query.order`: after `from` (the last of the batch before), else after `after`. */
  private candidates(
    query: Omit<PageQuery, 'test'>,
    after: string | undefined,
    from: StoredObject | undefined,
  ): Promise<Page | 'unknown-cursor'> {
    const wire: WireQuery = {
      order: query.order,
      limit: this.batch,
      ...(query.parent === undefined ? {} : { parent: query.parent }),
      ...(query.maxSeq === undefined ? {} : { maxSeq: query.maxSeq }),
      ...(from !== undefined ? { after: from.id, fromSeq: from.seq } : after === undefined ? {} : { after }),
    };
    return this.op('page', wire);
  }

  async count(query: Omit<PageQuery, 'after' | 'skip' | 'limit' | 'order'>): Promise<number> {
    const { test, ...rest } = query;
    if (test === undefined) return this.op('count', rest);
    let n = 0;
    let from: StoredObject | undefined;
    for (;;) {
      const batch = await this.candidates({ ...rest, order: 'asc', limit: this.batch }, undefined, from);
      if (batch === 'unknown-cursor') return n;
      for (const object of batch.items) if (test(object)) n++;
      if (!batch.hasMore) return n;
      from = batch.items[batch.items.length - 1];
    }
  }

  lastSeq(): Promise<number> {
    return this.op('lastSeq');
  }

  ticket(): Promise<number> {
    return this.op('ticket');
  }

  all(): Promise<readonly StoredObject[]> {
    return this.op('all');
  }

  history(id: string): Promise<readonly HistoryEntry[]> {
    return this.op('history', id);
  }

  async tag(id: string, version: number, request: number): Promise<void> {
    await this.op('tag', id, version, request);
  }
}
