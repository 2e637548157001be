// The fleet's journal script against a real redis-server (through the real connection and sink):
// every entry is added and counted once — the endpoints of a turn mixed, calls refused with NOSCRIPT
// by a Redis whose scripts were flushed and sent again after later ones — and an entry sent again
// after a broken write (a number at or below the writer's mark) is neither added nor counted twice.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openFleetConnection, pairsOf, type FleetConnection } from '../../src/fleet/connection.js';
import { ADD, createJournalSink } from '../../src/fleet/journal-sink.js';
import { fleetKeys } from '../../src/fleet/keys.js';
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
    const stream = (await conn.send(['XRANGE', keys.journal, '-', '+'])) as [string, string[]][];
    const numbers = stream.map((e) => Number((JSON.parse(e[1][5]!) as { query: { n: string } }).query.n));
    expect(numbers.sort((a, b) => a - b)).toEqual([...Array(sent).keys()]);
    const counts = new Map(pairsOf(await conn.send(['HGETALL', keys.counts])).map(([k, v]) => [k, Number(v)]));
    expect(counts).toEqual(expected);
    expect(Number(await conn.send(['GET', keys.requests]))).toBe(sent);
    await sink.close();
  });

  test('a call resent with numbers at or below the writer’s mark adds and counts nothing; a new number counts once', async () => {
    const keys = fleetKeys('resend');
    const run = (...triples: string[]) =>
      conn.run(ADD, [keys.journal, keys.counts, keys.marks, keys.requests], ['1000', 'host-b', ...triples]);
    const entry = (n: number) => JSON.stringify({ n });
    expect(await run('1', 'GET /y', entry(1), '2', 'GET /y', entry(2), '3', 'GET /z', entry(3))).toEqual(['0-1', 3, 3]);
    // The same call again (its connection broke after Redis took it): nothing more.
    expect(await run('1', 'GET /y', entry(1), '2', 'GET /y', entry(2), '3', 'GET /z', entry(3))).toEqual(['', 3, 0]);
    // Numbers 3 and 4: only 4 is new.
    expect(await run('3', 'GET /z', entry(3), '4', 'GET /y', entry(4))).toEqual(['0-4', 2, 1]);
    const counts = new Map(pairsOf(await conn.send(['HGETALL', keys.counts])).map(([k, v]) => [k, Number(v)]));
    expect(counts).toEqual(
      new Map([
        ['GET /y', 3],
        ['GET /z', 1],
      ]),
    );
    expect(Number(await conn.send(['GET', keys.requests]))).toBe(4);
    expect(Number(await conn.send(['XLEN', keys.journal]))).toBe(4);
  });
});
