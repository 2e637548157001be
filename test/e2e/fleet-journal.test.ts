// SPEC §12 with §8: a `serve --workers` worker numbers and keeps its own journal entries; the admin
// API merges every worker's part when asked. Units: the ids, the merge, the wait over several
// workers, and which Retry-Afters a worker tells the others.
import { describe, expect, test } from 'vitest';
import { createWorkerIds, MAX_SLOTS } from '../../src/workers/ids.js';
import { journalPart, mergeParts } from '../../src/workers/journal-parts.js';
import { createEntryFlow } from '../../src/workers/hub-flow.js';
import { createTellings, RETELL_MS } from '../../src/workers/hub-tellings.js';
import { viewEntry, type RawEntry } from '../../src/control/journal-entry.js';
import { createJournal, type Journal, type JournalSource } from '../../src/control/journal.js';
import { waitForEntries, type WorkersWatch, type HeldEntries } from '../../src/control/wait.js';
import { createKeyMatcher } from '../../src/pipeline/auth.js';
import { createRedactor } from '../../src/redact/redactor.js';

const KEY = 'mk_unit';
const compiled = { key: createKeyMatcher(KEY), redactor: createRedactor([KEY]), config: { apiKey: KEY } };
function source(url: string): JournalSource {
  return {
    req: { url, rawHeaders: [] },
    method: 'GET',
    compiled,
    step: 'response',
    endpoint: { key: 'GET /x' },
    answer: 'response',
    journalBody: undefined,
    bodyTruncated: false,
  };
}

/** Two workers' journals on one fake monotonic clock (microseconds). */
function twoWorkers(capacity = 100) {
  let now = 5_000;
  const clock = () => now;
  const ids = [createWorkerIds(0, 1_000, clock), createWorkerIds(1, 1_000, clock)];
  const journals = ids.map((id) => createJournal(capacity, () => 0, id.next));
  const record = (worker: number, path: string, advance = 1) => {
    now += advance;
    journals[worker]!.record(source(path), 200, undefined, 1);
  };
  return { ids, journals, record, tick: (us: number) => (now += us) };
}

describe('fleet ids', () => {
  test('increase in the order recorded whichever worker records, name the worker, and stay unique within a microsecond', () => {
    const { ids, journals, record } = twoWorkers();
    record(0, '/a');
    record(1, '/b');
    record(1, '/c', 0); // same microsecond as /b: the next one
    record(0, '/d', 0); // same microsecond on another worker: ordered by slot (no client can tell)
    record(0, '/e', 5);
    const all = journals.flatMap((j) => j.list({})).sort((x, y) => x.id - y.id);
    expect(all.map((e) => e.url)).toEqual(['/a', '/d', '/b', '/c', '/e']);
    expect(all.map((e) => e.id % MAX_SLOTS)).toEqual([0, 0, 1, 1, 0]);
    expect(ids[1]!.last()).toBe(all[3]!.id);
    expect(() => createWorkerIds(MAX_SLOTS, 0)).toThrow(RangeError);
  });

  test('the cutoff is above every id given before it and at most the next one given', () => {
    const { ids, journals, record } = twoWorkers();
    record(0, '/a');
    const cutoff = ids[1]!.cutoff();
    expect(journals[0]!.list({})[0]!.id).toBeLessThan(cutoff);
    record(1, '/b');
    expect(journals[1]!.list({})[0]!.id).toBeGreaterThanOrEqual(cutoff);
  });
});

describe('merging the workers parts', () => {
  test('a query is answered in id order, entries below the cutoff only, with since, limit and count', () => {
    const { ids, journals, record } = twoWorkers();
    for (let i = 0; i < 6; i++) record(i % 2, `/mock/x${i}`);
    const cutoff = ids[0]!.cutoff();
    record(1, '/mock/late'); // after the query began: left to the next one
    const parts = journals.map((j) => journalPart(j, {}, cutoff, true));
    const { entries, count } = mergeParts(parts, {}, 100);
    expect(entries.map((e) => e.path)).toEqual([
      '/mock/x0',
      '/mock/x1',
      '/mock/x2',
      '/mock/x3',
      '/mock/x4',
      '/mock/x5',
    ]);
    expect(count).toBe(6);
    const since = entries[2]!.id;
    const later = mergeParts(
      journals.map((j) => journalPart(j, { since, limit: 2 }, cutoff, true)),
      { since, limit: 2 },
      100,
    );
    expect(later.entries.map((e) => e.path)).toEqual(['/mock/x4', '/mock/x5']);
    expect(later.count).toBe(3);
    expect(
      mergeParts(
        journals.map((j) => journalPart(j, { since }, cutoff, false)),
        { since },
        100,
      ),
    ).toEqual({ entries: [], count: 3 });
  });

  test('the server keeps the newest `server.journal` entries of all workers, not that many per worker', () => {
    const { ids, journals, record } = twoWorkers(4);
    for (let i = 0; i < 3; i++) record(0, `/mock/a${i}`);
    for (let i = 0; i < 3; i++) record(1, `/mock/b${i}`);
    const cutoff = ids[0]!.cutoff();
    const merged = mergeParts(
      journals.map((j) => journalPart(j, { path: '/mock/a*' }, cutoff, true)),
      { path: '/mock/a*' },
      4,
    );
    expect(merged.entries.map((e) => e.path)).toEqual(['/mock/a2']);
    expect(merged.count).toBe(1);
    expect(
      mergeParts(
        journals.map((j) => journalPart(j, {}, cutoff, false)),
        {},
        0,
      ).count,
    ).toBe(0);
    // Asked with `since`, a part holds only the ids above it, and the answer is the same.
    const since = journals[0]!.list({})[1]!.id; // a1
    const parts = journals.map((j) => journalPart(j, { since }, cutoff, true));
    expect(parts.map((p) => p.kept.length)).toEqual([1, 3]);
    expect(mergeParts(parts, { since }, 4).entries.map((e) => e.path)).toEqual([
      '/mock/a2',
      '/mock/b0',
      '/mock/b1',
      '/mock/b2',
    ]);
    expect(mergeParts(parts, { since }, 3).entries.map((e) => e.path)).toEqual(['/mock/b0', '/mock/b1', '/mock/b2']);
  });
});

/** A fake fleet for `waitForEntries`: worker 1's journal, reached through its held part and forwarded entries. */
function fakeFleet(mine: Journal, other: Journal, otherIds: ReturnType<typeof createWorkerIds>) {
  let release: ((held: HeldEntries) => void) | undefined;
  let forwarding = false;
  other.listen((entry, heard) => {
    if (forwarding && !heard) mine.hear({ ...entry, view: viewEntry(entry) });
  });
  const fleet: WorkersWatch = {
    watch(filter) {
      forwarding = true;
      const last = otherIds.last();
      const entries: RawEntry[] = other.list(filter).map((e) => ({ ...e }));
      return {
        held: new Promise((done) => (release = done)).then(() => ({ entries, isNew: (e: RawEntry) => e.id > last })),
        stop: () => (forwarding = false),
      };
    },
  };
  return { fleet, answer: () => release?.(undefined as never) };
}

describe('a wait over several workers', () => {
  test('counts what the others held and what they forward, once each, and answers in id order', async () => {
    const { ids, journals, record } = twoWorkers();
    const [mine, other] = journals as [Journal, Journal];
    record(1, '/mock/held');
    const { fleet, answer } = fakeFleet(mine, other, ids[1]!);
    const waiting = waitForEntries(mine, { path: '/mock/*' }, { count: 4, timeout: '5s' }, undefined, fleet);
    record(1, '/mock/forwarded-before-the-answer'); // forwarded while the held part is on its way
    record(0, '/mock/mine');
    answer();
    await Promise.resolve();
    record(1, '/mock/forwarded-after');
    const entries = await waiting;
    expect(entries.map((e) => e.path)).toEqual([
      '/mock/held',
      '/mock/forwarded-before-the-answer',
      '/mock/mine',
      '/mock/forwarded-after',
    ]);
  });

  test('does not answer before the other workers said what they hold, even with enough of its own', async () => {
    const { ids, journals, record } = twoWorkers();
    const [mine, other] = journals as [Journal, Journal];
    record(1, '/mock/theirs');
    record(0, '/mock/mine');
    const { fleet, answer } = fakeFleet(mine, other, ids[1]!);
    let done = false;
    const waiting = waitForEntries(mine, {}, { count: 1 }, undefined, fleet).then(
      (entries) => ((done = true), entries),
    );
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    answer();
    expect((await waiting).map((e) => e.path)).toEqual(['/mock/theirs', '/mock/mine']);
  });
});

describe('Retry-Afters told to the other workers', () => {
  test('told for a new client and when the moment named moves by more than a second; not for every answer', () => {
    const tellings = createTellings(2);
    expect(tellings.worthTelling('c', '60', 0)).toBe(true);
    // A rate limit's Retry-After names the moment a slot frees, whole seconds: the same moment again.
    expect(tellings.worthTelling('c', '59', 400)).toBe(false);
    expect(tellings.worthTelling('c', '59', 1000)).toBe(false);
    expect(tellings.worthTelling('c', '60', RETELL_MS + 1)).toBe(true);
    expect(tellings.worthTelling('c', 'soon', 0)).toBe(false);
    expect(tellings.worthTelling('d', '1', 0)).toBe(true);
    expect(tellings.worthTelling('e', '1', 0)).toBe(true); // forgets c, told longest ago
    expect(tellings.worthTelling('c', '60', RETELL_MS + 1)).toBe(true);
  });
});

describe('forwarded entries on one channel', () => {
  test('at most `max` batches on their way: the rest are dropped and counted, and sending resumes as the channel takes them', () => {
    const pending: (() => void)[] = [];
    const written: number[] = [];
    const flow = createEntryFlow((entries, done) => {
      written.push(entries.length);
      pending.push(done);
    }, 2);
    const batch = (n: number) => Array.from({ length: n }, () => ({}) as never);
    expect([flow.send(batch(1)), flow.send(batch(2)), flow.send(batch(3)), flow.send(batch(4))]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(flow.dropped).toBe(7);
    pending.shift()!();
    expect(flow.send(batch(5))).toBe(true);
    expect(written).toEqual([1, 2, 5]);
  });
});
