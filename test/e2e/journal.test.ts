// The journal ring: bounded whatever the load, resizable on reload, off at 0; lazy redacted views.
import { describe, expect, test } from 'vitest';
import { createJournal, type JournalSource } from '../../src/control/journal.js';
import { viewEntry } from '../../src/control/journal-entry.js';
import { waitForEntries } from '../../src/control/wait.js';
import { createKeyMatcher } from '../../src/pipeline/auth.js';
import { createRedactor } from '../../src/redact/redactor.js';
import { createVirtualClock, parseIsoTime } from '../../src/control/virtual-clock.js';

const KEY = 'mk_unit';
const compiled = { key: createKeyMatcher(KEY), redactor: createRedactor([KEY]) };
function source(url: string, headers: string[] = []): JournalSource {
  return {
    req: { url, rawHeaders: headers },
    method: 'GET',
    compiled,
    step: 'response',
    endpoint: { key: 'GET /x' },
    answer: 'response',
    journalBody: undefined,
    bodyTruncated: false,
  };
}

describe('journal ring', () => {
  test('keeps the last `capacity` entries, oldest first, with increasing ids', () => {
    const journal = createJournal(100, () => 0);
    for (let i = 0; i < 10_000; i++) journal.record(source(`/mock/x?i=${i}`), 200, undefined, 1);
    const entries = journal.list({});
    expect(entries).toHaveLength(100);
    expect(entries[0]!.id).toBe(9_901);
    expect(entries[99]!.id).toBe(10_000);
    expect(journal.endpointCounts().get('GET /x')).toBe(10_000);
  });

  test('the ring reuses its entry objects: recording a request allocates no entry', () => {
    const journal = createJournal(2, () => 0);
    journal.record(source('/mock/0'), 200, undefined, 1);
    journal.record(source('/mock/1'), 200, undefined, 1);
    const first = journal.list({});
    journal.record(source('/mock/2'), 200, undefined, 1);
    journal.record(source('/mock/3'), 200, undefined, 1);
    const second = journal.list({});
    expect(second.map((e) => e.url)).toEqual(['/mock/2', '/mock/3']);
    expect(second[0]).toBe(first[0]);
    expect(second[1]).toBe(first[1]);
  });

  test('a wait keeps what it found although the ring reuses the entries', async () => {
    const journal = createJournal(1, () => 0);
    journal.record(source('/mock/a'), 200, undefined, 1);
    const waited = waitForEntries(journal, { limit: 3 }, { count: 3, timeout: '5s' });
    journal.record(source('/mock/b'), 200, undefined, 1);
    journal.record(source('/mock/c'), 200, undefined, 1);
    expect((await waited).map((e) => e.path)).toEqual(['/mock/a', '/mock/b', '/mock/c']);
  });

  test('resize keeps the newest; 0 keeps nothing but still tells listeners', () => {
    const journal = createJournal(5, () => 0);
    for (let i = 0; i < 5; i++) journal.record(source(`/mock/${i}`), 200, undefined, 1);
    journal.resize(2);
    expect(journal.list({}).map((e) => e.url)).toEqual(['/mock/3', '/mock/4']);
    journal.record(source('/mock/5'), 200, undefined, 1);
    expect(journal.list({}).map((e) => e.url)).toEqual(['/mock/4', '/mock/5']);
    journal.resize(0);
    expect(journal.enabled).toBe(false);
    const heard: string[] = [];
    const stop = journal.listen((e) => heard.push(e.url));
    expect(journal.enabled).toBe(true);
    journal.record(source('/mock/6'), 200, undefined, 1);
    stop();
    expect(heard).toEqual(['/mock/6']);
    expect(journal.list({})).toEqual([]);
  });

  test('the view redacts credentials and a header or query named __proto__ is a plain field', () => {
    const journal = createJournal(1, () => Date.UTC(2026, 0, 1));
    journal.record(
      source('/mock/a?__proto__=1&k=mk_unit', ['X-Api-Key', KEY, '__proto__', 'x', 'Proxy-Authorization', 'Basic abc']),
      200,
      'note',
      1,
    );
    const view = viewEntry(journal.list({})[0]!);
    expect(JSON.stringify(view.headers)).toBe(
      '{"x-api-key":"<redacted>","__proto__":"x","proxy-authorization":"<redacted>"}',
    );
    expect(Object.getPrototypeOf(view.headers)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(view.query)).toBe(Object.prototype);
    expect(JSON.stringify(view.query)).toBe('{"__proto__":"1","k":"<redacted>"}');
    expect(view.notes).toEqual(['note']);
  });
});

describe('virtual clock', () => {
  test('runs on from its start and moves with set and advance', () => {
    let real = 1000;
    const clock = createVirtualClock(Date.UTC(2026, 10, 30), () => real);
    expect(clock.now()).toBe(Date.UTC(2026, 10, 30));
    real += 500;
    expect(clock.now()).toBe(Date.UTC(2026, 10, 30) + 500);
    clock.advance(86_400_000);
    expect(new Date(clock.now()).toISOString()).toBe('2026-12-01T00:00:00.500Z');
    clock.set(0);
    expect(clock.now()).toBe(0);
  });

  test('parseIsoTime takes ISO times with a zone, or a date, and nothing else', () => {
    expect(parseIsoTime('2026-11-30T23:59:59Z')).toBe(Date.UTC(2026, 10, 30, 23, 59, 59));
    expect(parseIsoTime('2026-11-30T23:59:59+01:00')).toBe(Date.UTC(2026, 10, 30, 22, 59, 59));
    expect(parseIsoTime('2026-11-30')).toBe(Date.UTC(2026, 10, 30));
    expect(parseIsoTime('2026-11-30T23:59:59')).toBeUndefined();
    expect(parseIsoTime('tomorrow')).toBeUndefined();
  });
});
