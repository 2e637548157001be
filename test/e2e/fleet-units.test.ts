// Units of the fleet (src/fleet/): what `fleet.store` reads, the stream's entries read back (a newer
// or damaged one skipped with a note), the journal's writes bounded when Redis does not answer,
// the status table and its warnings, the lines of a rotation.
import { describe, expect, test, vi } from 'vitest';
import { fleetStoreProblem, resolveFleetStore } from '../../src/config/fleet.js';
import { pairsOf, streamEntriesOf, type FleetConnection } from '../../src/fleet/connection.js';
import { createSkipNotes, nextSeq, readStreamEntry } from '../../src/fleet/journal-wire.js';
import { createJournalSink } from '../../src/fleet/journal-sink.js';
import { ADD, MAX_IN_FLIGHT } from '../../src/fleet/journal-script.js';
import { fleetKeys } from '../../src/fleet/keys.js';
import { formatFleetStatus } from '../../src/fleet/status.js';
import { rotationLines } from '../../src/fleet/rotate.js';
import { createJournal, type JournalSource } from '../../src/control/journal.js';
import { createKeyMatcher } from '../../src/pipeline/auth.js';
import { createRedactor } from '../../src/redact/redactor.js';
import { silentLogger } from '../../src/logger.js';

describe('fleet.store', () => {
  test('a URL, or ${env.MOCKAPI_*} references with or without a fallback', () => {
    expect(fleetStoreProblem('redis://127.0.0.1:6379/0')).toBeUndefined();
    expect(fleetStoreProblem('${env.MOCKAPI_REDIS_URL}')).toBeUndefined();
    expect(fleetStoreProblem("${env.MOCKAPI_REDIS_URL ?? 'redis://127.0.0.1:6379'}")).toBeUndefined();
    expect(fleetStoreProblem('http://example.com')).toMatch(/^must be a redis:\/\/host:port\/db/);
    expect(fleetStoreProblem('${env.REDIS_URL}')).toBe(
      'may only read environment variables named MOCKAPI_*, got REDIS_URL',
    );
    expect(fleetStoreProblem('${params.id}')).toMatch(/^may read the environment only/);
    expect(resolveFleetStore('${env.MOCKAPI_REDIS_URL}', { MOCKAPI_REDIS_URL: 'redis://r:6379' })).toEqual({
      url: 'redis://r:6379',
      missing: [],
    });
    expect(resolveFleetStore('${env.MOCKAPI_REDIS_URL}', {})).toEqual({ url: '', missing: ['MOCKAPI_REDIS_URL'] });
    expect(resolveFleetStore("${env.MOCKAPI_REDIS_URL ?? 'redis://fallback:1'}", {})).toEqual({
      url: 'redis://fallback:1',
      missing: [],
    });
    expect(resolveFleetStore('redis://${env.MOCKAPI_HOST}:6379/0', { MOCKAPI_HOST: 'r1' })).toEqual({
      url: 'redis://r1:6379/0',
      missing: [],
    });
  });
});

describe('the stream entries, read back', () => {
  const view = {
    id: 7,
    time: '2026-01-01T00:00:00.000Z',
    method: 'GET',
    path: '/mock/a',
    query: {},
    headers: {},
    body: '',
    bodyTruncated: false,
    endpoint: null,
    response: null,
    status: 200,
    ms: 1,
    step: 'response',
    credential: { via: 'none', key: 'unknown' },
    notes: [],
  };
  test('take the stream id as their id; another format or a damaged one is skipped, never thrown', () => {
    // Format 1 (an older mockapi): one entry.
    expect(readStreamEntry(['0-42', ['v', '1', 'h', 'host-a', 'e', JSON.stringify(view)]])).toMatchObject([
      { ok: true, id: 42, host: 'host-a', entry: { id: 42, path: '/mock/a' } },
    ]);
    // Format 2: a line each, numbered from the stream id on; a damaged line is skipped alone.
    const second = { ...view, path: '/mock/b' };
    expect(
      readStreamEntry([
        '0-50',
        ['v', '2', 'h', 'host-b', 'e', [JSON.stringify(view), '{nope', JSON.stringify(second)].join('\n')],
      ]),
    ).toMatchObject([
      { ok: true, id: 50, host: 'host-b', entry: { id: 50, path: '/mock/a' } },
      { ok: false, id: 51, why: 'damaged' },
      { ok: true, id: 52, host: 'host-b', entry: { id: 52, path: '/mock/b' } },
    ]);
    expect(nextSeq(['0-50', ['v', '2', 'h', 'x', 'e', '{}\n{}\n{}']])).toBe(53);
    expect(nextSeq(['0-42', ['v', '1', 'h', 'x', 'e', '{}']])).toBe(43);
    expect(readStreamEntry(['0-43', ['v', '3', 'h', 'x', 'e', '{}']])).toEqual([
      { ok: false, id: 43, why: 'format', format: '3' },
    ]);
    expect(readStreamEntry(['0-44', ['v', '1', 'h', 'x', 'e', '{nope']])).toEqual([
      { ok: false, id: 44, why: 'damaged' },
    ]);
    expect(readStreamEntry(['0-45', ['v', '1', 'e', JSON.stringify({ ...view, status: 'x' })]])).toEqual([
      { ok: false, id: 45, why: 'damaged' },
    ]);
    expect(readStreamEntry(['0-46', ['h', 'x']])).toEqual([{ ok: false, id: 46, why: 'damaged' }]);
    expect(readStreamEntry(['0-47', ['v', '2', 'h', 'x']])).toEqual([{ ok: false, id: 47, why: 'damaged' }]);
    expect(readStreamEntry(null)).toMatchObject([{ ok: false, why: 'damaged' }]);
    expect(readStreamEntry('garbage')).toMatchObject([{ ok: false, why: 'damaged' }]);
  });

  test('a skip is said once a minute per kind', () => {
    const said: string[] = [];
    let now = 0;
    const note = createSkipNotes(
      (m) => said.push(m),
      () => now,
    );
    note({ ok: false, id: 1, why: 'format', format: '3' });
    note({ ok: false, id: 2, why: 'format', format: '3' });
    note({ ok: false, id: 3, why: 'damaged' });
    now += 60_000;
    note({ ok: false, id: 4, why: 'format', format: '3' });
    expect(said).toEqual([
      'fleet: skipped journal entry 1 (and any like it for a minute): it is in format 3, written by another version of mockapi; this host reads formats 1 and 2',
      'fleet: skipped journal entry 3 (and any like it for a minute): it is damaged',
      'fleet: skipped journal entry 4 (and any like it for a minute): it is in format 3, written by another version of mockapi; this host reads formats 1 and 2',
    ]);
  });

  test('hash and stream replies in every shape the client gives', () => {
    expect(pairsOf(['a', '1', 'b', '2'])).toEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
    expect(pairsOf({ a: '1' })).toEqual([['a', '1']]);
    expect(pairsOf(new Map([['a', 1]]))).toEqual([['a', '1']]);
    expect(pairsOf(null)).toEqual([]);
    expect(streamEntriesOf([['k', [['0-1', []]]]])).toEqual([['0-1', []]]);
    expect(streamEntriesOf({ k: [['0-1', []]] })).toEqual([['0-1', []]]);
    expect(streamEntriesOf(null)).toEqual([]);
  });
});

describe('the journal writes', () => {
  const KEY = 'mk_unit';
  const compiled = { key: createKeyMatcher(KEY), redactor: createRedactor([KEY]) };
  const source = (url: string): JournalSource => ({
    req: { url, rawHeaders: [] },
    method: 'GET',
    compiled,
    step: 'response',
    endpoint: { key: 'GET /x' },
    answer: 'response',
    journalBody: undefined,
    bodyTruncated: false,
  });

  /** A connection whose calls never get an answer (a Redis that hangs), or answer as told. */
  function fakeConnection() {
    const calls: { args: string[]; answer(reply: unknown): void; fail(err: Error): void }[] = [];
    const ups: (() => void)[] = [];
    const conn = {
      up: true,
      url: 'redis://fake',
      sendOpen(args: string[]) {
        return new Promise((done, fail) => calls.push({ args, answer: done, fail }));
      },
      onUp(listener: () => void) {
        ups.push(listener);
      },
      onDown() {},
    } as unknown as FleetConnection;
    /** The connection is ready again (a reconnection, perhaps to a restarted Redis). */
    const reconnect = () => ups.forEach((up) => up());
    return { conn, calls, reconnect };
  }
  const turn = () => new Promise((done) => setImmediate(done));

  /** A sink on `conn` fed by a journal of `capacity` entries; `record(from, to)` records `/mock/x?i=from` … `i=to-1`. */
  function journaled(conn: FleetConnection, host: string, capacity: number, logger = silentLogger) {
    const sink = createJournalSink(conn, fleetKeys('p'), host, () => capacity, logger);
    const journal = createJournal(capacity, () => 0);
    journal.listen((entry) => sink.add(entry));
    const record = (from: number, to: number) => {
      for (let i = from; i < to; i++) journal.record(source(`/mock/x?i=${i}`), 200, undefined, 1);
    };
    return { sink, record };
  }
  /** The entry numbers of a journal call's arguments, and the `i` of each entry's query (the texts: one argument, a line each). */
  const numbersOf = (args: string[]) => args.slice(11).filter((_, i) => i % 3 === 0);
  const queryIs = (args: string[]) =>
    args[10]!.split('\n').map((t) => (JSON.parse(t) as { query: { i: string } }).query.i);

  test('one call per loop turn, carrying every entry of the turn', async () => {
    const { conn, calls } = fakeConnection();
    journaled(conn, 'host-a', 100).record(0, 5);
    await turn();
    expect(calls).toHaveLength(1);
    const args = calls[0]!.args;
    expect(args.slice(0, 10)).toEqual([
      'EVAL', // the first call carries the script (see below)
      ADD.source,
      '5',
      '{mockapi:p}:fleet:journal',
      '{mockapi:p}:fleet:counts',
      '{mockapi:p}:fleet:marks',
      '{mockapi:p}:fleet:requests',
      '{mockapi:p}:fleet:answers',
      '100',
      'host-a',
    ]);
    // The entries' texts, a line each, then (number, endpoint, answer) for each
    expect(numbersOf(args)).toEqual(['1', '2', '3', '4', '5']);
    expect(args.slice(11).filter((_, i) => i % 3 === 1)).toEqual(['GET /x', 'GET /x', 'GET /x', 'GET /x', 'GET /x']);
    expect(args.slice(11).filter((_, i) => i % 3 === 2)).toEqual([
      'response',
      'response',
      'response',
      'response',
      'response',
    ]);
    expect(queryIs(args)).toEqual(['0', '1', '2', '3', '4']);
    expect(JSON.parse(args[10]!.split('\n')[0]!)).toMatchObject({ path: '/mock/x', query: { i: '0' } });
  });

  test('a Redis that does not answer: at most a few calls out, the entries waiting here bounded', async () => {
    const { conn, calls } = fakeConnection();
    const sink = createJournalSink(conn, fleetKeys('p'), 'host-a', () => 50, silentLogger);
    const journal = createJournal(50, () => 0);
    journal.listen((entry) => sink.add(entry));
    for (let round = 0; round < 40; round++) {
      for (let i = 0; i < 300; i++) journal.record(source(`/mock/x?r=${round}`), 200, undefined, 1);
      await turn();
    }
    expect(calls.length).toBe(MAX_IN_FLIGHT);
    // What the calls out hold, and what waits (the newest 1,000 at most).
    const carried = calls.reduce((n, c) => n + (c.args.length - 11) / 3, 0);
    expect(carried).toBeLessThanOrEqual(MAX_IN_FLIGHT * 300);
    // Once Redis answers, the rest goes, newest kept.
    for (const c of calls.splice(0)) c.answer(['0-1', (c.args.length - 11) / 3, (c.args.length - 11) / 3]);
    await turn();
    await turn();
    const after = calls.reduce((n, c) => n + (c.args.length - 11) / 3, 0);
    expect(after).toBeLessThanOrEqual(1000);
    expect(after).toBeGreaterThan(0);
    const last = calls[calls.length - 1]!.args;
    expect(JSON.parse(last[10]!.split('\n').pop()!).query).toEqual({ r: '39' });
  });

  test('entries a call did not carry are sent again with new numbers (a later call may have raised the mark past theirs)', async () => {
    const { conn, calls } = fakeConnection();
    const said: string[] = [];
    journaled(conn, 'h', 10, { ...silentLogger, warn: (m) => said.push(m) }).record(0, 3);
    await turn();
    calls[0]!.answer(['0-1', 1, 1]); // as if the client had written the call with its first entry only
    await turn();
    await turn();
    expect(said).toEqual(['fleet: a journal write carried 1 of 3 entries; the rest are sent again']);
    // Numbers 1-3 went out with the call; Redis took 1 only. With their old numbers 2 and 3 they
    // would be skipped as taken after any call numbered above them had run.
    expect(numbersOf(calls[1]!.args)).toEqual(['4', '5']);
    expect(queryIs(calls[1]!.args)).toEqual(['1', '2']);
  });
  test('calls Redis refused go again in number order, whichever was refused last', async () => {
    // Refused in the order they were sent (a later call's refusal comes back last): put back each at
    // the front, the later one's entries would go first, raise the writer's mark past the earlier
    // one's and have them skipped as taken.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const { conn, calls } = fakeConnection();
      const { record } = journaled(conn, 'h', 10);
      record(0, 2);
      await turn();
      record(2, 4);
      await turn();
      expect(calls.map((c) => numbersOf(c.args))).toEqual([
        ['1', '2'],
        ['3', '4'],
      ]);
      calls[0]!.fail(new Error('OOM command not allowed when used memory > maxmemory'));
      calls[1]!.fail(new Error('OOM command not allowed when used memory > maxmemory'));
      await turn();
      vi.advanceTimersByTime(1000);
      expect(calls.slice(2).map((c) => numbersOf(c.args))).toEqual([['1', '2', '3', '4']]);
      expect(queryIs(calls[2]!.args)).toEqual(['0', '1', '2', '3']);
    } finally {
      vi.useRealTimers();
    }
  });
  test('calls carry the script until one by source ran: at the start and after each reconnection (a fresh Redis has none)', async () => {
    // A call by hash that a fresh Redis refuses reaches it only a round trip after its answers were
    // written: another host's journal query could miss a request this host had answered (the fleet
    // page's walk-through did, under load).
    const { conn, calls, reconnect } = fakeConnection();
    const { sink, record } = journaled(conn, 'h', 10);
    record(0, 1);
    await turn();
    record(1, 2);
    await turn();
    expect(calls.map((c) => c.args[0])).toEqual(['EVAL', 'EVAL']); // nothing ran yet: both carry it
    calls[0]!.answer(['0-1', 1, 1]);
    await turn();
    record(2, 3);
    await turn();
    expect(calls[2]!.args[0]).toBe('EVALSHA');
    expect(calls[2]!.args[1]).toBe(ADD.sha);
    reconnect(); // perhaps to a Redis restarted meanwhile: its script cache is empty
    record(3, 4);
    await turn();
    expect(calls[3]!.args.slice(0, 2)).toEqual(['EVAL', ADD.source]);
    sink.discard();
  });

  test('a call Redis refused for lack of the script goes again by source, numbered after the entries of a broken write', async () => {
    const { conn, calls } = fakeConnection();
    const { sink, record } = journaled(conn, 'h', 10);
    record(0, 1);
    await turn();
    calls[0]!.answer(['0-1', 1, 1]); // the first call, by source, ran: the next go by hash
    await turn();
    record(1, 4);
    await turn();
    record(4, 6);
    await turn();
    expect(calls.map((c) => [c.args[0], numbersOf(c.args)])).toEqual([
      ['EVAL', ['1']],
      ['EVALSHA', ['2', '3', '4']],
      ['EVALSHA', ['5', '6']],
    ]);
    // The second call's connection broke (Redis may have taken it: its entries keep their numbers);
    // then the third comes back NOSCRIPT (a Redis whose scripts were flushed: not taken, numbered
    // again, after the second's).
    calls[1]!.fail(new Error('Socket closed unexpectedly'));
    await turn();
    calls[2]!.fail(new Error('NOSCRIPT No matching script. Please use EVAL.'));
    await turn();
    expect(calls).toHaveLength(4);
    expect(calls[3]!.args[0]).toBe('EVAL');
    expect(numbersOf(calls[3]!.args)).toEqual(['2', '3', '4', '7', '8']);
    expect(queryIs(calls[3]!.args)).toEqual(['1', '2', '3', '4', '5']);
    sink.discard();
  });
});

describe('fleet status', () => {
  const host = (address: string, config: string, seenAgo: number, version = '1.0.0') => ({
    address,
    hostname: 'm1',
    pid: 10,
    version,
    config,
    started: new Date(0).toISOString(),
    lastSeen: new Date(1_000_000 - seenAgo).toISOString(),
    alive: seenAgo <= 10_000,
  });
  test('a table of the hosts; a warning when the live ones serve different configs', () => {
    const same = formatFleetStatus(
      {
        project: 'shop',
        store: 'redis://r:6379',
        hosts: [host('http://a:1', 'a'.repeat(64), 1000), host('http://b:1', 'a'.repeat(64), 30_000)],
        configs: ['a'.repeat(64)],
      },
      1_000_000,
    );
    expect(same.lines).toEqual([
      'fleet of shop through redis://r:6379: 1 host (and 1 gone)',
      'ADDRESS     HOST  PID  VERSION  CONFIG        LAST SEEN',
      'http://a:1  m1    10   1.0.0    aaaaaaaaaaaa  1s ago',
      'http://b:1  m1    10   1.0.0    aaaaaaaaaaaa  30s ago (gone?)',
    ]);
    expect(same.warnings).toEqual([]);
    const differ = formatFleetStatus(
      {
        project: 'shop',
        store: 'redis://r',
        hosts: [host('http://a:1', 'a'.repeat(64), 0), host('http://b:1', 'b'.repeat(64), 0, '1.1.0')],
        configs: ['a'.repeat(64), 'b'.repeat(64)],
      },
      1_000_000,
    );
    expect(differ.warnings).toEqual([
      'warning: the hosts serve 2 different configs (aaaaaaaaaaaa on http://a:1; bbbbbbbbbbbb on http://b:1); stubs, resources and the journal are shared but the configs are not merged: give every host the same file',
      'warning: the hosts run different versions of mockapi (1.0.0, 1.1.0)',
    ]);
  });

  test('the lines of a rotation name the hosts that did not confirm', () => {
    const hosts = [
      { id: 'h2', address: 'http://b:1', hostname: 'm2', pid: 2, version: '1', config: 'x', started: 0, seen: 0 },
    ];
    expect(
      rotationLines({ acked: ['h1'], failed: [{ host: 'h3', error: 'not valid' }], missing: ['h2'] }, hosts, 'apiKey'),
    ).toEqual([
      'fleet: 1 of 3 other hosts registered in the store confirmed the new apiKey',
      'warning: fleet host h3 could not rotate its config: not valid; it may still accept the old key',
      'warning: fleet host http://b:1 (m2, pid 2) did not confirm the new key within 5s; it may still accept the old key',
    ]);
  });
});
