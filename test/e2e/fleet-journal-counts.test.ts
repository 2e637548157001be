// The fleet's journal script against a real redis-server (through the real connection and sink):
// every entry is added and counted once — the endpoints of a turn mixed, calls refused with NOSCRIPT
// by a Redis whose scripts were flushed and sent again after later ones — and an entry sent again
// after a broken write (a number at or below the writer's mark) is neither added nor counted twice.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openFleetConnection, pairsOf, type FleetConnection } from '../../src/fleet/connection.js';
import { createJournalSink } from '../../src/fleet/journal-sink.js';
import { ADD } from '../../src/fleet/journal-script.js';
import { fleetKeys } from '../../src/fleet/keys.js';
import { readStreamEntry } from '../../src/fleet/journal-wire.js';
import { createJournalTail } from '../../src/fleet/journal-read.js';
import { createJournal, type JournalSource } from '../../src/control/journal.js';
import { createKeyMatcher } from '../../src/pipeline/auth.js';
import { createRedactor } from '../../src/redact/redactor.js';
import { silentLogger } from '../../src/logger.js';
import { hasRedisServer, startRedis, type RedisServer } from '../helpers/redis.js';

const KEY = 'mk_unit';
const compiled = { key: createKeyMatcher(KEY), redactor: createRedactor([KEY]) };
const source = (url: string, endpoint: string | undefined): JournalSource => ({
  req: { url, rawHeaders: [] },
  method: 'GET',
  compiled,
  step: 'response',
  endpoint: endpoint === undefined ? undefined : { key: endpoint },
  answer: 'response',
  journalBody: undefined,
  bodyTruncated: false,
});

describe.runIf(hasRedisServer())('the journal script, on a real Redis', () => {
  let redis: RedisServer;
  let conn: FleetConnection;
  beforeAll(async () => {
    redis = await startRedis();
    conn = await openFleetConnection(redis.url, 'journal-counts');
  });
  afterAll(async () => {
    await conn?.close();
    await redis?.stop();
  });

  /** A journal view (the fields a reader checks), its path naming `n`. */
  const view = (n: number) =>
    JSON.stringify({
      time: '2026-01-01T00:00:00.000Z',
      method: 'GET',
      path: `/mock/${n}`,
      query: {},
      headers: {},
      status: 200,
      ms: 1,
      step: 'response',
      endpoint: null,
      notes: [],
    });
  /** One journal script call of `host` with the entries numbered `numbers` (no endpoint), the journal keeping 1,000. */
  const writeCall = (keys: ReturnType<typeof fleetKeys>, host: string, numbers: number[]) =>
    conn.run(
      ADD,
      [keys.journal, keys.counts, keys.marks, keys.requests, keys.answers],
      ['1000', host, numbers.map(view).join('\n'), ...numbers.flatMap((n) => [String(n), '', ''])],
    );

  test('a Redis that loses its scripts twice, and turns mixing three endpoints: every entry added once, every count exact', async () => {
    // After each SCRIPT FLUSH (as a restarted Redis the connection did not notice) the calls by hash
    // fail with NOSCRIPT and are sent again with the script's source, after later calls have run
    // (once one loaded it again): their entries must not be taken as sent already.
    const keys = fleetKeys('counts');
    const sink = createJournalSink(conn, keys, 'host-a', () => 1000, silentLogger);
    const journal = createJournal(1000, () => 0);
    journal.listen((entry) => sink.add(entry));
    const endpoints = ['GET /a', 'GET /b', undefined, 'GET /a', 'POST /c'];
    const expected = new Map<string, number>();
    let sent = 0;
    for (let turn = 0; turn < 20; turn++) {
      // 1 to 40 entries a turn: one script call each turn, endpoints mixed within it.
      for (let i = 0; i < 1 + ((turn * 7) % 40); i++) {
        const endpoint = endpoints[(turn + i) % endpoints.length];
        journal.record(source(`/mock/x?n=${sent++}`, endpoint), 200, undefined, 1);
        if (endpoint !== undefined) expected.set(endpoint, (expected.get(endpoint) ?? 0) + 1);
      }
      await new Promise((done) => setImmediate(done));
      if (turn === 5 || turn === 12) await conn.send(['SCRIPT', 'FLUSH']);
    }
    await sink.flush();
    // The refusals happened (the path this test is about).
    const stats = String(await conn.send(['INFO', 'commandstats']));
    expect(Number(/cmdstat_evalsha:.*failed_calls=(\d+)/.exec(stats)?.[1] ?? 0)).toBeGreaterThan(0);
    const stream = (await conn.send(['XRANGE', keys.journal, '-', '+'])) as unknown[];
    const read = stream.flatMap((e) => readStreamEntry(e));
    const numbers = read.map((e) => (e.ok ? Number(e.entry.query.n) : -1));
    expect(numbers.sort((a, b) => a - b)).toEqual([...Array(sent).keys()]);
    // One order: the ids 1…sent, each once.
    expect(read.map((e) => e.id)).toEqual([...Array(sent).keys()].map((i) => i + 1));
    const counts = new Map(pairsOf(await conn.send(['HGETALL', keys.counts])).map(([k, v]) => [k, Number(v)]));
    expect(counts).toEqual(expected);
    // Each endpoint's answers too, under `<endpoint>\0<answer>` (every entry here answered by `response`).
    const answers = new Map(pairsOf(await conn.send(['HGETALL', keys.answers])).map(([k, v]) => [k, Number(v)]));
    expect(answers).toEqual(new Map([...expected].map(([endpoint, n]) => [`${endpoint}\0response`, n])));
    expect(Number(await conn.send(['GET', keys.requests]))).toBe(sent);
    await sink.close();
  });

  test('a call resent with numbers at or below the writer’s mark adds and counts nothing; a new number counts once', async () => {
    const keys = fleetKeys('resend');
    /** A call: the texts, then (number, endpoint, answer) for each. */
    const run = (...entries: [number, string][]) =>
      conn.run(
        ADD,
        [keys.journal, keys.counts, keys.marks, keys.requests, keys.answers],
        [
          '1000',
          'host-b',
          entries.map(([n]) => JSON.stringify({ n })).join('\n'),
          ...entries.flatMap(([n, endpoint]) => [String(n), endpoint, 'response']),
        ],
      );
    expect(await run([1, 'GET /y'], [2, 'GET /y'], [3, 'GET /z'])).toEqual(['0-1', 3, 3]);
    // The same call again (its connection broke after Redis took it): nothing more.
    expect(await run([1, 'GET /y'], [2, 'GET /y'], [3, 'GET /z'])).toEqual(['', 3, 0]);
    // Another writer adds an entry the plain way: it is numbered after the call's three.
    expect(await conn.send(['XADD', keys.journal, '0-*', 'v', '1', 'h', 'other', 'e', '{"n":"other"}'])).toBe('0-4');
    // Numbers 3, 4 and 5: only 4 and 5 are new, numbered after the other writer's.
    expect(await run([3, 'GET /z'], [4, 'GET /y'], [5, 'GET /z'])).toEqual(['0-5', 3, 2]);
    // A call whose middle number was taken (not sent so, but kept exact): only the new ones.
    expect(await run([6, 'GET /y'], [5, 'GET /z'], [7, 'GET /z'])).toEqual(['0-7', 3, 2]);
    const counts = new Map(pairsOf(await conn.send(['HGETALL', keys.counts])).map(([k, v]) => [k, Number(v)]));
    expect(counts).toEqual(
      new Map([
        ['GET /y', 4],
        ['GET /z', 3],
      ]),
    );
    const answers = new Map(pairsOf(await conn.send(['HGETALL', keys.answers])).map(([k, v]) => [k, Number(v)]));
    expect(answers).toEqual(
      new Map([
        ['GET /y\0response', 4],
        ['GET /z\0response', 3],
      ]),
    );
    expect(Number(await conn.send(['GET', keys.requests]))).toBe(7);
    const stream = (await conn.send(['XRANGE', keys.journal, '-', '+'])) as [string, string[]][];
    expect(stream.map(([id, fields]) => [id, fields[5]])).toEqual([
      ['0-1', '{"n":1}\n{"n":2}\n{"n":3}'],
      ['0-4', '{"n":"other"}'],
      ['0-5', '{"n":4}\n{"n":5}'],
      ['0-7', '{"n":6}\n{"n":7}'],
    ]);
  });

  test('the stream keeps the newest entries the journal holds, and never cuts a call short', async () => {
    const keys = fleetKeys('trim');
    let n = 0;
    for (let call = 0; call < 300; call++) {
      const entries = Array.from({ length: 1 + (call % 5) }, () => ++n);
      await conn.run(
        ADD,
        [keys.journal, keys.counts, keys.marks, keys.requests, keys.answers],
        [
          '50',
          'host-t',
          entries.map((i) => JSON.stringify({ i })).join('\n'),
          ...entries.flatMap((i) => [String(i), '', '']),
        ],
      );
    }
    const ids = ((await conn.send(['XRANGE', keys.journal, '-', '+'])) as unknown[]).flatMap((e) =>
      readStreamEntry(e).map((r) => r.id),
    );
    // Every id from the oldest kept to the newest, in order; at least the newest 50; not everything.
    expect(ids[ids.length - 1]).toBe(n);
    expect(ids).toEqual([...Array(ids.length).keys()].map((i) => n - ids.length + 1 + i));
    expect(ids.length).toBeGreaterThanOrEqual(50);
    expect(ids.length).toBeLessThan(n);
  });
  test('a range reads the entries of its ids alone, wherever the calls that added them begin and end', async () => {
    const keys = fleetKeys('ranges');
    // Calls of 1 to 4 entries: ids 1…20 in stream entries that begin at 1, 2, 4, 7, 11, 12, …
    let n = 0;
    for (const size of [1, 2, 3, 4, 1, 2, 3, 4]) {
      await writeCall(
        keys,
        'host-r',
        Array.from({ length: size }, () => ++n),
      );
    }
    const tail = createJournalTail(conn, `${keys.nudge}:t`, silentLogger);
    const reader = tail.reader(keys.journal);
    const ids = async (cap: number, since?: number, upTo?: number) =>
      (await reader.range(cap, since, upTo)).map((e) => e.id);
    const expected = (cap: number, since = 0, upTo = n) => {
      const all = [...Array(n).keys()].map((i) => i + 1).filter((i) => i > since && i <= upTo);
      return all.slice(Math.max(0, all.length - cap));
    };
    for (const cap of [1, 3, 100])
      for (const since of [undefined, 0, 1, 2, 3, 5, 6, 9, 19, 20])
        for (const upTo of [undefined, 1, 2, 4, 5, 8, 17, 20])
          expect([cap, since, upTo, await ids(cap, since, upTo)]).toEqual([
            cap,
            since,
            upTo,
            expected(cap, since, upTo),
          ]);
    expect((await reader.range(2, 2, 6)).map((e) => e.path)).toEqual(['/mock/5', '/mock/6']);
    // A listener joined now is told the last id there is, and hears what comes next.
    const heard: number[] = [];
    const joined = await reader.join((entry) => heard.push(entry.id));
    expect(joined.from).toBe(n);
    await writeCall(keys, 'host-r', [21, 22]);
    for (let i = 0; i < 200 && heard.length < 2; i++) await new Promise((done) => setTimeout(done, 10));
    expect(heard).toEqual([21, 22]);
    joined.leave();
    await tail.close();
  });
  test('a damaged count does not stop the entries, and a call that ran is never added twice', async () => {
    const keys = fleetKeys('damaged');
    await conn.send(['HSET', keys.counts, 'GET /y', 'not-a-number']);
    const run = () =>
      conn.run(
        ADD,
        [keys.journal, keys.counts, keys.marks, keys.requests, keys.answers],
        ['1000', 'host-d', '{"n":1}\n{"n":2}', '1', 'GET /y', '', '2', 'GET /z', ''],
      );
    expect(await run()).toEqual(['0-1', 2, 2]);
    // Sent again (its answer lost): nothing more.
    expect(await run()).toEqual(['', 2, 0]);
    expect(Number(await conn.send(['XLEN', keys.journal]))).toBe(1);
    expect(await conn.send(['HGET', keys.counts, 'GET /z'])).toBe('1');
    expect(Number(await conn.send(['GET', keys.requests]))).toBe(2);
  });

  test('a listener joined while the read for the one before was out hears only what came after its from', async () => {
    const keys = fleetKeys('join-race');
    const add = (n: number) => writeCall(keys, 'host-j', [n]);
    await add(1);
    // The tail's blocking reads go through a gate: the first read's answer is held until let go.
    const reads: string[][] = [];
    let letGo!: () => void;
    const held = new Promise<void>((done) => (letGo = done));
    const real = conn.blocking();
    const gated = {
      sendCommand: (args: string[]) => {
        reads.push(args);
        const reply = real.sendCommand(args);
        return reads.length === 1 ? held.then(() => reply) : reply;
      },
    };
    const tail = createJournalTail(
      { ...conn, blocking: () => gated } as unknown as FleetConnection,
      `${keys.nudge}:r`,
      silentLogger,
    );
    const reader = tail.reader(keys.journal);
    const until = async (condition: () => boolean) => {
      for (let i = 0; i < 500 && !condition(); i++) await new Promise((done) => setTimeout(done, 10));
      expect(condition()).toBe(true);
    };
    const first = await reader.join(() => {});
    await until(() => reads.length === 1);
    first.leave();
    await add(2); // the held read gets it, and holds it
    const heard: number[] = [];
    const second = await reader.join((entry) => heard.push(entry.id));
    expect(second.from).toBe(2);
    letGo();
    await until(() => reads.length >= 2); // the held answer was handled, the next read is out
    expect(heard).toEqual([]);
    await add(3);
    await until(() => heard.length === 1);
    expect(heard).toEqual([3]);
    second.leave();
    await tail.close();
  });
  test('a range with an entry it skips (another format) leaves no gap', async () => {
    const keys = fleetKeys('gaps');
    const call = (...numbers: number[]) => writeCall(keys, 'host-g', numbers);
    await call(1, 2, 3);
    await call(4, 5);
    expect(await conn.send(['XADD', keys.journal, '0-*', 'v', '3', 'h', 'future', 'e', '{}'])).toBe('0-6');
    await call(7);
    const tail = createJournalTail(conn, `${keys.nudge}:g`, silentLogger);
    const reader = tail.reader(keys.journal);
    const ids = async (cap: number, since?: number) => (await reader.range(cap, since)).map((e) => e.id);
    expect(await ids(100, 1)).toEqual([2, 3, 4, 5, 7]);
    expect(await ids(3, 1)).toEqual([4, 5, 7]);
    // The newest two stream entries after 1 are 7 and the skipped 6: 7 alone, never 3 and 7.
    expect(await ids(2, 1)).toEqual([7]);
    await tail.close();
  });
});
