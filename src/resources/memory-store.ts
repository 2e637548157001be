import { MemoryCollection } from './memory-collection.js';
import type { DueMove, IdempotencyRecord, ResourceStore, SavedAnswer } from './store.js';

/** A min-heap of moves by due time (ties: first scheduled first). */
class DueHeap {
  private readonly items: Array<DueMove & { n: number }> = [];
  private n = 0;

  push(move: DueMove): void {
    const items = this.items;
    items.push({ ...move, n: this.n++ });
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  peek(): DueMove | undefined {
    return this.items[0];
  }

  pop(): DueMove | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && this.less(l, m)) m = l;
        if (r < items.length && this.less(r, m)) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m]!, items[i]!];
        i = m;
      }
    }
    return top;
  }

  filter(keep: (move: DueMove) => boolean): void {
    const kept = this.items.filter(keep);
    this.items.length = 0;
    for (const move of kept) this.push(move);
  }

  private less(a: number, b: number): boolean {
    const x = this.items[a]!;
    const y = this.items[b]!;
    return x.due < y.due || (x.due === y.due && x.n < y.n);
  }
}

interface KeyEntry {
  record: IdempotencyRecord;
  expires: number;
}

/** Idempotency keys kept before the expired ones are swept. */
const KEY_SWEEP_EVERY = 10_000;

/** The store of one process: collections, moves due and idempotency keys in memory. */
export class MemoryResourceStore implements ResourceStore {
  readonly shared = false;
  private readonly scopes = new Map<string, Map<string, MemoryCollection>>();
  private readonly seeded = new Set<string>();
  private readonly due = new DueHeap();
  /** The version each object's move was last scheduled for: earlier entries in the heap are stale. */
  private readonly scheduled = new Map<string, number>();
  private readonly keys = new Map<string, KeyEntry>();
  private keysSinceSweep = 0;

  collection(scope: string, name: string): MemoryCollection {
    let collections = this.scopes.get(scope);
    if (collections === undefined) this.scopes.set(scope, (collections = new Map()));
    let collection = collections.get(name);
    if (collection === undefined) collections.set(name, (collection = new MemoryCollection()));
    return collection;
  }

  /** The scopes and collections that hold anything. */
  collections(): Array<{ scope: string; name: string; collection: MemoryCollection }> {
    return [...this.scopes].flatMap(([scope, map]) =>
      [...map].map(([name, collection]) => ({ scope, name, collection })),
    );
  }

  markSeeded(scope: string, name: string): boolean {
    const key = `${scope}\u0000${name}`;
    if (this.seeded.has(key)) return false;
    this.seeded.add(key);
    return true;
  }

  clear(scope: string, names?: readonly string[]): void {
    const collections = this.scopes.get(scope);
    for (const name of names ?? [...(collections?.keys() ?? [])]) {
      collections?.delete(name);
      this.seeded.delete(`${scope}\u0000${name}`);
    }
    if (names === undefined)
      for (const key of [...this.seeded]) if (key.startsWith(`${scope}\u0000`)) this.seeded.delete(key);
    const gone = (move: DueMove): boolean =>
      move.scope === scope && (names === undefined || names.includes(move.collection));
    this.due.filter((move) => !gone(move));
    for (const key of [...this.scheduled.keys()]) {
      const [s, c] = key.split('\u0000');
      if (s === scope && (names === undefined || names.includes(c as string))) this.scheduled.delete(key);
    }
  }

  schedule(move: Omit<DueMove, 'due'>, due: number | undefined): void {
    const key = `${move.scope}\u0000${move.collection}\u0000${move.id}`;
    if (due === undefined) {
      this.scheduled.delete(key);
      return;
    }
    this.scheduled.set(key, move.version);
    this.due.push({ ...move, due });
  }

  takeDue(now: number, limit: number): DueMove[] {
    const taken: DueMove[] = [];
    while (taken.length < limit) {
      const top = this.due.peek();
      if (top === undefined || top.due > now) break;
      this.due.pop();
      const key = `${top.scope}\u0000${top.collection}\u0000${top.id}`;
      if (this.scheduled.get(key) !== top.version) continue; // rescheduled or cancelled since
      this.scheduled.delete(key);
      taken.push({ scope: top.scope, collection: top.collection, id: top.id, version: top.version, due: top.due });
    }
    return taken;
  }

  nextDue(): number | undefined {
    for (;;) {
      const top = this.due.peek();
      if (top === undefined) return undefined;
      if (this.scheduled.get(`${top.scope}\u0000${top.collection}\u0000${top.id}`) === top.version) return top.due;
      this.due.pop();
    }
  }

  claimKey(scope: string, key: string, fingerprint: string, now: number, ttlMs: number): IdempotencyRecord | undefined {
    const name = `${scope}\u0000${key}`;
    const held = this.keys.get(name);
    if (held !== undefined && held.expires > now) return held.record;
    this.keys.set(name, { record: { state: 'pending', fingerprint }, expires: now + ttlMs });
    if (++this.keysSinceSweep >= KEY_SWEEP_EVERY) this.sweepKeys(now);
    return undefined;
  }

  completeKey(scope: string, key: string, fingerprint: string, answer: SavedAnswer, now: number, ttlMs: number): void {
    const name = `${scope}\u0000${key}`;
    const held = this.keys.get(name);
    this.keys.set(name, { record: { state: 'done', fingerprint, answer }, expires: held?.expires ?? now + ttlMs });
  }

  releaseKey(scope: string, key: string): void {
    const name = `${scope}\u0000${key}`;
    if (this.keys.get(name)?.record.state === 'pending') this.keys.delete(name);
  }

  clearKeys(scope: string): void {
    for (const name of [...this.keys.keys()]) if (name.startsWith(`${scope}\u0000`)) this.keys.delete(name);
  }

  private sweepKeys(now: number): void {
    this.keysSinceSweep = 0;
    for (const [name, entry] of this.keys) if (entry.expires <= now) this.keys.delete(name);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
