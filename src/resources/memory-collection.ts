import {
  GONE_LIMIT,
  HISTORY_LIMIT,
  type CollectionStore,
  type HistoryEntry,
  type NewObject,
  type Page,
  type PageQuery,
  type StoredObject,
} from './store.js';

/**
 * One collection in memory: the objects in creation order (an array, so a page is a walk from a
 * position) and by id (a map, so a retrieve or a cursor is one lookup). A deleted object leaves a
 * tombstone in the array, removed once they are more than the objects left, so a delete costs
 * nothing to shift; its seq is kept by id, so that a cursor naming it still has a place. 100,000 small objects take about their JSON text plus ~150 bytes each.
 */

/**
 * One object as the collection holds it. A class with every field set in its constructor: V8 then
 * gives all objects one compact shape (~130 bytes; an object literal spread from another took ~470).
 */
class Slot implements StoredObject {
  /** Index in `order`; changes only when tombstones are swept. */
  pos: number;
  dead = false;
  /** Entries after `created` (which is implied), oldest first; most objects have none. */
  log: HistoryEntry[] | undefined = undefined;
  /** The request that created it. */
  by: number | undefined = undefined;

  constructor(
    readonly id: string,
    readonly text: string,
    readonly version: number,
    readonly seq: number,
    readonly parent: string,
    readonly since: number,
    readonly created: number,
    /** How it came: `created` by a request, `seeded`, `admin`. */
    public origin: HistoryEntry['kind'],
    pos: number,
  ) {
    this.pos = pos;
  }

  /** The same object with a new text, status time and version (a write). */
  next(text: string, since: number): Slot {
    const slot = new Slot(
      this.id,
      text,
      this.version + 1,
      this.seq,
      this.parent,
      since,
      this.created,
      this.origin,
      this.pos,
    );
    slot.by = this.by;
    slot.log = this.log;
    return slot;
  }
}

export class MemoryCollection implements CollectionStore {
  private readonly byId = new Map<string, Slot>();
  /** The seqs of the last {@link GONE_LIMIT} objects deleted, by id: a cursor naming one goes on from where it stood. */
  private readonly gone = new Map<string, number>();
  private order: Slot[] = [];
  private dead = 0;
  private seq = 0;

  get(id: string): StoredObject | undefined {
    return this.byId.get(id);
  }

  create(object: NewObject, history: HistoryEntry): StoredObject | undefined {
    if (this.byId.has(object.id)) return undefined;
    const slot = new Slot(
      object.id,
      object.text,
      1,
      ++this.seq,
      object.parent,
      object.since,
      object.created,
      history.kind,
      this.order.length,
    );
    if (history.request !== undefined) slot.by = history.request;
    if (history.detail !== undefined) slot.log = [history];
    this.order.push(slot);
    this.byId.set(object.id, slot);
    if (this.gone.size > 0) this.gone.delete(object.id);
    return slot;
  }

  /** Puts an object as it was dumped (persisted file, admin `PUT`), keeping its seq. */
  restore(object: StoredObject, history: readonly HistoryEntry[] = []): void {
    const old = this.byId.get(object.id);
    if (old !== undefined) this.kill(old);
    const slot = new Slot(
      object.id,
      object.text,
      object.version,
      object.seq,
      object.parent,
      object.since,
      object.created,
      'created',
      0,
    );
    if (history.length > 0) {
      const [first, ...rest] = history;
      slot.origin = first?.kind ?? 'created';
      if (first?.request !== undefined) slot.by = first.request;
      if (rest.length > 0) slot.log = rest.slice(-HISTORY_LIMIT);
    }
    this.seq = Math.max(this.seq, object.seq);
    // Kept in seq order: a restored object usually comes last, else it is put in its place.
    const at =
      this.order.length === 0 || (this.order[this.order.length - 1] as Slot).seq < slot.seq
        ? this.order.length
        : this.firstAtOrAfter(slot.seq);
    this.order.splice(at, 0, slot);
    for (let i = at; i < this.order.length; i++) (this.order[i] as Slot).pos = i;
    this.byId.set(slot.id, slot);
    this.gone.delete(slot.id);
  }

  replace(
    id: string,
    version: number,
    text: string,
    since: number,
    history: HistoryEntry,
  ): StoredObject | 'conflict' | undefined {
    const old = this.byId.get(id);
    if (old === undefined) return undefined;
    if (old.version !== version) return 'conflict';
    const slot = old.next(text, since);
    slot.log = [...(old.log ?? []), history].slice(-HISTORY_LIMIT);
    this.order[old.pos] = slot;
    this.byId.set(id, slot);
    return slot;
  }

  delete(id: string): StoredObject | undefined {
    const old = this.byId.get(id);
    if (old === undefined) return undefined;
    this.kill(old);
    return old;
  }

  private kill(slot: Slot): void {
    this.byId.delete(slot.id);
    slot.dead = true;
    this.gone.delete(slot.id); // (to the end: the oldest deletions are forgotten first)
    this.gone.set(slot.id, slot.seq);
    if (this.gone.size > GONE_LIMIT) this.gone.delete(this.gone.keys().next().value as string);
    if (++this.dead > 1024 && this.dead > this.byId.size) this.sweep();
  }

  /** Drops the tombstones: positions change, seqs do not. */
  private sweep(): void {
    this.order = this.order.filter((slot) => !slot.dead);
    this.order.forEach((slot, i) => (slot.pos = i));
    this.dead = 0;
  }

  /** The position of the first slot whose seq is at least `seq` (binary search: seqs grow along the array). */
  private firstAtOrAfter(seq: number): number {
    let low = 0;
    let high = this.order.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((this.order[mid] as Slot).seq < seq) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  page(query: PageQuery): Page | 'unknown-cursor' {
    const { order } = this;
    const step = query.order === 'asc' ? 1 : -1;
    let at: number;
    if (query.after !== undefined) {
      const cursor = this.byId.get(query.after);
      if (cursor !== undefined) at = cursor.pos + step;
      else {
        // A deleted object (stripe-node deleting each page as it pages): on from where its seq stood.
        const seq = this.gone.get(query.after);
        if (seq === undefined) return 'unknown-cursor';
        at = step === 1 ? this.firstAtOrAfter(seq + 1) : this.firstAtOrAfter(seq) - 1;
      }
    } else if (step === 1) at = 0;
    else at = query.maxSeq === undefined ? order.length - 1 : this.firstAtOrAfter(query.maxSeq + 1) - 1;
    const items: StoredObject[] = [];
    let skip = query.skip ?? 0;
    const { parent, maxSeq, test, limit } = query;
    for (; at >= 0 && at < order.length; at += step) {
      const slot = order[at] as Slot;
      if (slot.dead || (parent !== undefined && slot.parent !== parent)) continue;
      if (maxSeq !== undefined && slot.seq > maxSeq) {
        if (step === 1) break;
        continue;
      }
      if (test !== undefined && !test(slot)) continue;
      if (skip > 0) {
        skip--;
        continue;
      }
      if (items.length === limit) return { items, hasMore: true };
      items.push(slot);
    }
    return { items, hasMore: false };
  }

  count(query: Omit<PageQuery, 'after' | 'skip' | 'limit' | 'order'>): number {
    const { parent, maxSeq, test } = query;
    if (parent === undefined && test === undefined) {
      // Every live object but those created after the snapshot, counted from the end.
      let newer = 0;
      if (maxSeq !== undefined)
        for (let i = this.order.length - 1; i >= 0 && (this.order[i] as Slot).seq > maxSeq; i--)
          if (!(this.order[i] as Slot).dead) newer++;
      return this.byId.size - newer;
    }
    let n = 0;
    for (const slot of this.order) {
      if (slot.dead || (parent !== undefined && slot.parent !== parent) || (maxSeq !== undefined && slot.seq > maxSeq))
        continue;
      if (test === undefined || test(slot)) n++;
    }
    return n;
  }

  lastSeq(): number {
    return this.seq;
  }

  all(): StoredObject[] {
    return this.order.filter((slot) => !slot.dead);
  }

  size(): number {
    return this.byId.size;
  }

  tag(id: string, version: number, request: number, object?: StoredObject): void {
    // The object the write gave back, when it is still this collection's for its id (live, in its
    // place): found without a lookup by id (the request that wrote it is tagged right after).
    const slot =
      object instanceof Slot && !object.dead && this.order[object.pos] === object ? object : this.byId.get(id);
    if (slot === undefined || slot.version !== version) return;
    if (version === 1) slot.by = request;
    const last = slot.log?.at(-1);
    if (slot.log !== undefined && last !== undefined && (version > 1 || last.kind === slot.origin))
      slot.log[slot.log.length - 1] = { ...last, request };
  }

  history(id: string): HistoryEntry[] {
    const slot = this.byId.get(id);
    if (slot === undefined) return [];
    const first: HistoryEntry = {
      at: slot.created,
      kind: slot.origin,
      ...(slot.by === undefined ? {} : { request: slot.by }),
    };
    const log = slot.log ?? [];
    return log[0]?.kind === slot.origin && log[0].at === slot.created ? log : [first, ...log];
  }
}
