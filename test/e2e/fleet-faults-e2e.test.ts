// A fleet under faults: limits exact across three hosts; one host killed with SIGKILL under load
// (the others keep answering, nothing admitted is lost); Redis going away and coming back (the
// journal and the stubs go on per host and catch up, with a line saying how many); a Redis that
// hangs; entries in the stream written by a newer or a broken host (skipped with a note).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServe, useTempDir, waitFor, type ServeProcess } from '../helpers/cli.js';
import { hammer, type Answer } from '../helpers/load.js';
import { hasRedisServer, startRedis, type RedisServer } from '../helpers/redis.js';

const KEY = 'mk_fleet_faults_key_00000000000000001';
const dir = useTempDir('mockapi-fleet-faults-');
let redis: RedisServer;
beforeAll(async () => {
  // On a unix socket: a client reconnecting to a TCP port nothing listens on can, now and then, be
  // given that very port and connect to itself (a TCP simultaneous open), and stay there.
  redis = await startRedis();
});
afterAll(() => redis?.stop());

async function fleet(project: string, n: number, extra = ''): Promise<ServeProcess[]> {
  const yaml = `project: ${project}\napiKey: ${KEY}\nfleet: { store: ${redis.url} }\nserver: { journal: 5000 }\n${extra}endpoints:\n  - method: GET\n    path: /a\n`;
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const folder = join(dir.path, `${project}-${i}`);
      await mkdir(folder, { recursive: true });
      await writeFile(join(folder, 'mockapi.yaml'), yaml);
      return startServe(['-c', join(folder, 'mockapi.yaml'), '--log', 'off', '--no-state']);
    }),
  );
}
const get = async (url: string, init: RequestInit = {}) => {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
};
const mock = (h: ServeProcess, path: string) => get(`${h.mock}${path}`, { headers: { 'x-api-key': KEY } });
const journal = async (h: ServeProcess, query = '') =>
  (await get(`${h.url}/__mockapi/requests?limit=5000${query}`)).body.requests as {
    id: number;
    time: string;
    query: Record<string, string>;
    headers: { host: string };
  }[];

describe.runIf(hasRedisServer())('a fleet under faults', () => {
  test('limits are exact across three hosts driven round-robin', async () => {
    const hosts = await fleet('exact', 3, 'limits:\n  rateLimit: { requests: 30, window: 1h }\n');
    const answers = await hammer(
      hosts.map((h) => `${h.mock}/a`),
      KEY,
      { clients: 2, max: 20 },
    );
    expect(answers).toHaveLength(120);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(30);
    expect(answers.filter((a) => a.status !== 200 && a.status !== 429)).toEqual([]);
    // Every host took a part of them.
    for (let i = 0; i < 3; i++) expect(answers.some((a) => a.server === i && a.status === 200)).toBe(true);
    await Promise.all(hosts.map((h) => h.stop()));
  }, 60_000);

  test('kill -9 of one host under load: the others keep answering, and nothing admitted is lost', async () => {
    const hosts = await fleet('killed', 3, 'limits:\n  monthlyQuota: 1000000\n');
    const answers: Answer[] = [];
    let n = 0;
    // Each request is named (?n=…) so the journal can be checked for every one that was answered.
    const urls = hosts.map((h) => `${h.mock}/a`);
    const named = (server: number) => `${urls[server]}?n=${server}-${n++}`;
    let killed = false;
    const loop = async (server: number) => {
      for (let sent = 0; sent < 150 && !(server === 2 && killed); sent++) {
        const url = named(server);
        try {
          const res = await fetch(url, { headers: { 'x-api-key': KEY } });
          answers.push({ server, status: res.status, body: url, contentType: null, remaining: null });
          await res.arrayBuffer();
        } catch {
          answers.push({ server, status: 0, body: url, contentType: null, remaining: null });
        }
        if (server === 2 && sent === 40) {
          hosts[2]!.child.kill('SIGKILL');
          killed = true;
        }
      }
    };
    await Promise.all([0, 1, 2].flatMap((server) => [loop(server), loop(server)]));
    await hosts[2]!.stop();
    const survivors = answers.filter((a) => a.server !== 2);
    expect(survivors.filter((a) => a.status !== 200)).toEqual([]);
    const answered = answers.filter((a) => a.status === 200);
    // Every admitted answer was counted in the shared month…
    const usage = (await get(`${hosts[0]!.url}/__mockapi/usage`)).body;
    expect(usage.requests).toBeGreaterThanOrEqual(answered.length);
    expect(usage.requests).toBeLessThanOrEqual(answers.length);
    // …and is in the fleet's journal, the killed host's included: its entry reached Redis before its answer left.
    const listed = new Set((await journal(hosts[1]!, '&path=/mock/a')).map((e) => e.query.n));
    const missing = answered.map((a) => new URL(a.body).searchParams.get('n')).filter((name) => !listed.has(name!));
    expect(missing).toEqual([]);
    await Promise.all(hosts.slice(0, 2).map((h) => h.stop()));
  }, 90_000);

  test('entries, stubs and messages written by a newer or a broken host are skipped with a note; the rest is read', async () => {
    // Stubs in the fleet's Redis that this host cannot take: a damaged record, one this version refuses.
    redis.cli(
      'HSET',
      '{mockapi:skips}:fleet:stubs',
      'aaaaaaaaaaaa',
      '{damaged',
      'bbbbbbbbbbbb',
      '2 {"id":"bbbbbbbbbbbb","name":"from-the-future","endpoint":{"method":"GET","path":"/future","response":{"status":200},"hologram":true},"times":null}',
      'cccccccccccc',
      '3 {"id":"cccccccccccc","name":"fine","endpoint":{"method":"GET","path":"/fine","response":{"body":{"fine":true}}},"times":null}',
    );
    const [a] = await fleet('skips', 1);
    await a!.waitForOutput(
      /fleet: skipped stub aaaaaaaaaaaa kept in the fleet's Redis: it is damaged, or in a format this version of mockapi does not read/,
    );
    await a!.waitForOutput(
      /fleet: skipped stub from-the-future kept in the fleet's Redis: this host cannot serve it \(the stub is not valid: \/endpoint\/hologram: endpoint\.hologram is not a known field; expected one of [^)\n]*\); it was added by another version of mockapi, or a host with another config/,
    );
    expect((await mock(a!, '/fine')).body).toEqual({ fine: true });
    redis.cli('PUBLISH', 'mockapi:skips:fleet', '{damaged');
    redis.cli('PUBLISH', 'mockapi:skips:fleet', '{"v":2,"from":"future-host","change":{"op":"stub"}}');
    await a!.waitForOutput(/fleet: skipped a damaged message on the fleet channel/);
    await a!.waitForOutput(
      /fleet: skipped messages of format 2 \(from a newer or older mockapi\); this host reads format 1/,
    );
    expect((await mock(a!, '/a?k=1')).status).toBe(200);
    const stream = '{mockapi:skips}:fleet:journal';
    redis.cli('XADD', stream, '0-*', 'v', '3', 'h', 'future-host', 'e', '{"shape":"new"}');
    redis.cli('XADD', stream, '0-*', 'v', '1', 'h', 'broken-host', 'e', '{not json');
    redis.cli('XADD', stream, '0-*', 'v', '1', 'h', 'odd-host', 'e', '{"method":3}');
    expect((await mock(a!, '/a?k=2')).status).toBe(200);
    const entries = await journal(a!, '&path=/mock/a');
    expect(entries.map((e) => e.query.k)).toEqual(['1', '2']);
    expect(entries[1]!.id - entries[0]!.id).toBe(4); // the three skipped were between them
    await a!.waitForOutput(
      /fleet: skipped journal entry \d+ \(and any like it for a minute\): it is in format 3, written by another version of mockapi; this host reads formats 1 and 2/,
    );
    await a!.waitForOutput(/fleet: skipped journal entry \d+ \(and any like it for a minute\): it is damaged/);
    // A wait reads past them too.
    const waiting = get(`${a!.url}/__mockapi/requests/wait?since=${entries[1]!.id}&timeout=20s`);
    redis.cli('XADD', stream, '0-*', 'v', '4', 'h', 'future-host', 'e', '{}');
    expect((await mock(a!, '/a?k=3')).status).toBe(200);
    expect((await waiting).body.requests.map((e: { query: { k: string } }) => e.query.k)).toEqual(['3']);
    expect((await get(`${a!.url}/__mockapi/health`)).status).toBe(200);
    await a!.stop();
  }, 60_000);

  test('Redis away and back: the journal and the stubs go on per host, then catch up, saying how many', async () => {
    const [a, b] = await fleet('outage', 2, 'limits:\n  storeDown: open\n');
    expect((await mock(a!, '/a?at=before')).status).toBe(200);
    // Listed through Redis: its write was answered. (Sent, not answered, when Redis dies, it would be
    // sent again to the empty Redis that restarts, and counted among the entries added.)
    expect((await journal(a!)).map((e) => e.query.at)).toEqual(['before']);
    await redis.kill();
    await a!.waitForOutput(/fleet: Redis unix:\/\/\S+ is away/);
    await b!.waitForOutput(/fleet: Redis unix:\/\/\S+ is away/);
    for (const [h, at] of [
      [a, 'a1'],
      [b, 'b1'],
      [a, 'a2'],
      [b, 'b2'],
      [a, 'a3'],
    ] as const)
      expect((await mock(h!, `/a?at=${at}`)).status).toBe(200);
    // Each host's journal answers on its own meanwhile.
    expect((await journal(a!)).map((e) => e.query.at)).toEqual(['before', 'a1', 'a2', 'a3']);
    // A stub added while Redis is away answers on that host.
    const stub = await get(`${a!.url}/__mockapi/stubs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ endpoint: { method: 'GET', path: '/alone', response: { body: { alone: true } } } }),
    });
    expect(stub.status).toBe(201);
    expect((await mock(a!, '/alone')).body).toEqual({ alone: true });
    await redis.restart();
    await a!.waitForOutput(
      /fleet: Redis is back; added 4 journal entries kept while it was away, in order of their time/,
      'stderr',
      20_000,
    );
    await b!.waitForOutput(
      /fleet: Redis is back; added 2 journal entries kept while it was away, in order of their time/,
      'stderr',
      20_000,
    );
    await a!.waitForOutput(
      /fleet: Redis is back; shared 1 stub change made on this host while it was away/,
      'stderr',
      20_000,
    );
    // The restarted Redis was empty: the fleet's journal holds what was kept, in order of time.
    for (const h of [a!, b!]) {
      const entries = (await journal(h, '&path=/mock/a')).filter((e) => e.query.at !== 'before');
      expect(entries.map((e) => e.query.at).sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2']);
      expect(entries.filter((e) => e.query.at!.startsWith('a')).map((e) => e.query.at)).toEqual(['a1', 'a2', 'a3']);
    }
    expect((await mock(b!, '/alone')).body).toEqual({ alone: true });
    await Promise.all([a!.stop(), b!.stop()]);
  }, 90_000);

  test('a host started while Redis is away answers alone, then joins the fleet when it is back', async () => {
    const open = 'limits:\n  storeDown: open\n';
    const [a] = await fleet('late', 1, open);
    await redis.kill();
    const [late] = await fleet('late', 1, open);
    await late!.waitForOutput(/fleet: Redis unix:\/\/\S+ cannot be reached; this host answers on its own until it can/);
    expect((await mock(late!, '/a?at=alone')).status).toBe(200); // storeDown: open
    await redis.restart();
    // Once it is back, a stub added on the other host reaches the late one (its subscription is made as soon as it can).
    await waitFor(
      async () =>
        (await get(`${a!.url}/__mockapi/health`)).status === 200 &&
        (await get(`${late!.url}/__mockapi/stubs`)).status === 200,
      20_000,
      100,
    );
    const added = await get(`${a!.url}/__mockapi/stubs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ endpoint: { method: 'GET', path: '/joined', response: { body: { joined: true } } } }),
    });
    expect(added.status).toBe(201);
    await waitFor(async () => (await mock(late!, '/joined')).status === 200, 20_000, 100).catch((err) => {
      console.log(
        'LATE',
        late!.stderr(),
        'A',
        a!.stderr(),
        redis.cli('PUBSUB', 'NUMSUB', 'mockapi:late:fleet'),
        redis.cli('CLIENT', 'LIST'),
        late!.child.pid,
        a!.child.pid,
      );
      throw err;
    });
    expect((await mock(late!, '/joined')).body).toEqual({ joined: true });
    await Promise.all([a!.stop(), late!.stop()]);
  }, 90_000);

  test('a Redis that hangs: the host keeps answering (storeDown: open), and its entries reach the journal once Redis answers', async () => {
    const [a] = await fleet('hang', 1, 'limits:\n  storeDown: open\n');
    expect((await mock(a!, '/a?at=before')).status).toBe(200);
    redis.pause();
    try {
      // Each waits for the limits' 3 s deadline, then is admitted here.
      const during = await Promise.all(['h1', 'h2', 'h3'].map((at) => mock(a!, `/a?at=${at}`)));
      expect(during.map((r) => r.status)).toEqual([200, 200, 200]);
      // The journal of this host answers meanwhile (after the fleet's read gave up).
      expect((await journal(a!)).map((e) => e.query.at).sort()).toEqual(['before', 'h1', 'h2', 'h3']);
    } finally {
      redis.resume();
    }
    const entries = await journal(a!);
    expect(entries.map((e) => e.query.at)[0]).toBe('before');
    expect(entries.map((e) => e.query.at).sort()).toEqual(['before', 'h1', 'h2', 'h3']);
    expect(new Set(entries.map((e) => e.id)).size).toBe(4);
    await a!.stop();
  }, 60_000);
});
