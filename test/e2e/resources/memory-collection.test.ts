// The in-memory collection: pages over deleted objects, the sweep of tombstones (positions change,
// cursors and snapshots do not), counts, restore in creation order.
import { describe, expect, test } from 'vitest';
import { MemoryCollection } from '../../../src/resources/memory-collection.js';

function fill(n: number): MemoryCollection {
  const coll = new MemoryCollection();
  for (let i = 1; i <= n; i++)
    coll.create(
      { id: `o${i}`, text: `{"id":"o${i}","n":${i}}`, parent: i % 2 === 0 ? 'even' : 'odd', since: 0, created: 0 },
      { at: 0, kind: 'created' },
    );
  return coll;
}

const ids = (page: ReturnType<MemoryCollection['page']>): string[] =>
  page === 'unknown-cursor' ? ['unknown'] : page.items.map((o) => o.id);

describe('MemoryCollection', () => {
  test('pages skip deleted objects before and after the sweep of tombstones', () => {
    const coll = fill(3000);
    for (let i = 1; i <= 2500; i++) if (i % 5 !== 0) coll.delete(`o${i}`); // 2000 tombstones: swept
    expect(coll.size()).toBe(1000);
    expect(ids(coll.page({ order: 'asc', limit: 3 }))).toEqual(['o5', 'o10', 'o15']);
    expect(ids(coll.page({ order: 'asc', after: 'o2495', limit: 3 }))).toEqual(['o2500', 'o2501', 'o2502']);
    expect(ids(coll.page({ order: 'desc', limit: 2 }))).toEqual(['o3000', 'o2999']);
    expect(ids(coll.page({ order: 'desc', maxSeq: 2600, limit: 2 }))).toEqual(['o2600', 'o2599']);
    expect(ids(coll.page({ order: 'desc', after: 'o2505', limit: 2 }))).toEqual(['o2504', 'o2503']);
    // a deleted object's tombstone is swept: its seq still places the cursor
    expect(ids(coll.page({ order: 'asc', after: 'o3', limit: 2 }))).toEqual(['o5', 'o10']);
    expect(ids(coll.page({ order: 'desc', after: 'o2499', limit: 2 }))).toEqual(['o2495', 'o2490']);
    expect(ids(coll.page({ order: 'asc', after: 'o9999', limit: 1 }))).toEqual(['unknown']); // never was
    expect(coll.count({})).toBe(1000);
    expect(coll.count({ maxSeq: 2500 })).toBe(500);
    expect(coll.count({ parent: 'even' })).toBe(250 + 250);
    expect(ids(coll.page({ order: 'asc', parent: 'odd', skip: 2, limit: 2 }))).toEqual(['o25', 'o35']);
    expect(coll.lastSeq()).toBe(3000);
  });

  test('a cursor naming a deleted object goes on from where it stood, tombstone or not; created again, it is live', () => {
    const coll = fill(6);
    coll.delete('o3');
    expect(ids(coll.page({ order: 'asc', after: 'o3', limit: 2 }))).toEqual(['o4', 'o5']);
    expect(ids(coll.page({ order: 'desc', after: 'o3', limit: 5 }))).toEqual(['o2', 'o1']);
    coll.create({ id: 'o3', text: '{"id":"o3"}', parent: '', since: 0, created: 0 }, { at: 0, kind: 'created' });
    expect(ids(coll.page({ order: 'asc', after: 'o3', limit: 2 }))).toEqual([]); // the new o3 is the newest
    expect(ids(coll.page({ order: 'desc', after: 'o3', limit: 1 }))).toEqual(['o6']);
  });

  test("a write keeps the object's place; a history entry names its request; restore keeps creation order", () => {
    const coll = fill(5);
    const written = coll.replace('o2', 1, '{"id":"o2","n":20}', 7, { at: 7, kind: 'updated', detail: 'n' });
    expect(written).toMatchObject({ version: 2, seq: 2, since: 7 });
    expect(coll.replace('o2', 1, '{}', 8, { at: 8, kind: 'updated' })).toBe('conflict');
    coll.tag('o2', 2, 41);
    expect(coll.history('o2')).toEqual([
      { at: 0, kind: 'created' },
      { at: 7, kind: 'updated', detail: 'n', request: 41 },
    ]);
    expect(ids(coll.page({ order: 'asc', limit: 10 }))).toEqual(['o1', 'o2', 'o3', 'o4', 'o5']);
    const copy = new MemoryCollection();
    for (const o of [...coll.all()].reverse()) copy.restore(o, coll.history(o.id));
    expect(ids(copy.page({ order: 'asc', limit: 10 }))).toEqual(['o1', 'o2', 'o3', 'o4', 'o5']);
    expect(copy.history('o2')).toEqual(coll.history('o2'));
    expect(copy.lastSeq()).toBe(5);
  });
});
