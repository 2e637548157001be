// Named sessions on a fleet: three `mockapi serve` processes, each with its own copy of one config,
// and one redis-server. A session made on one host is every host's: its stubs, journal, waits,
// clock, resources and limits are the same whichever host a request of it reaches, and no other
// session (nor the default one) sees them; dropped on one host, it is gone on all.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServe, useTempDir, waitFor, type ServeProcess } from '../helpers/cli.js';
import { hasRedisServer, startRedis, type RedisServer } from '../helpers/redis.js';

const KEY = 'mk_fleet_sessions_key_000000000000001';
const CI_KEY = 'mk_fleet_sessions_ci_0000000000000001';
const CONFIG = `project: fleet-sessions
apiKey: ${KEY}
keys:
  - { name: ci, key: ${CI_KEY} }
fleet: { store: "\${env.MOCKAPI_REDIS_URL}" }
limits:
  monthlyQuota: 1000000
scenarios:
  order: { initial: none }
endpoints:
  - method: GET
    path: /hello
    response: { body: { hello: true } }
  - method: GET
    path: /now
    response: { body: { now: "\${now}" } }
  - method: GET
    path: /limited
    limits: { rateLimit: { requests: 4, window: 1h } }
    response: { body: { ok: true } }
resources:
  customers:
    style: stripe
    path: /v1/customers
    fields: { object: customer, email: null, metadata: {} }
`;

const dir = useTempDir('mockapi-fleet-sessions-');
let redis: RedisServer;
let hosts: ServeProcess[] = [];

async function host(name: string, config = CONFIG): Promise<ServeProcess> {
  const folder = join(dir.path, name);
  await mkdir(folder, { recursive: true });
  const file = join(folder, 'mockapi.yaml');
  await writeFile(file, config);
  return startServe(['-c', file, '--log', 'off', '--clock', '2026-03-01T00:00:00Z'], {
    env: { MOCKAPI_REDIS_URL: redis.url },
  });
}

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}
/** A mock request in `session` ('' for the default one). */
const mock = (h: ServeProcess, session: string, path: string, init: RequestInit = {}) =>
  json(`${h.mock}${path}`, {
    ...init,
    headers: {
      'x-api-key': KEY,
      ...(session === '' ? {} : { 'x-mockapi-session': session }),
      ...(init.headers as Record<string, string>),
    },
  });
/** An admin call in `session` ('' for the default one). */
const admin = (h: ServeProcess, session: string, path: string, method = 'GET', body?: unknown) =>
  json(`${h.url}/__mockapi/${path}${session === '' ? '' : `${path.includes('?') ? '&' : '?'}session=${session}`}`, {
    method,
    ...(method === 'GET' ? {} : { headers: { 'content-type': 'application/json' } }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const ids = (list: { id: string }[]) => list.map((s) => s.id).sort();

beforeAll(async () => {
  redis = await startRedis({ tcp: true });
  hosts = await Promise.all(['a', 'b', 'c'].map((name) => host(name)));
}, 120_000);
afterAll(async () => {
  await Promise.all(hosts.map((h) => h.stop()));
  await redis?.stop();
});

describe.runIf(hasRedisServer())('named sessions shared by three hosts of one fleet', () => {
  test('a session made on A is listed on B and C; one made again is refused on any host', async () => {
    const [a, b, c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    const made = await admin(a, '', 'sessions', 'POST', { id: 'S' });
    expect(made.status).toBe(201);
    expect((await admin(b, '', 'sessions', 'POST', { id: 'T' })).status).toBe(201);
    for (const h of [a, b, c]) expect(ids((await admin(h, '', 'sessions')).body.sessions)).toEqual(['S', 'T']);
    // One server: every host says the same `created` for a session, the one that made it too.
    const createdOn = async (h: ServeProcess) =>
      ((await admin(h, '', 'sessions')).body.sessions as { id: string; created: string }[])
        .map((s) => `${s.id} ${s.created}`)
        .sort();
    const onA = await createdOn(a);
    for (const h of [b, c]) expect(await createdOn(h)).toEqual(onA);
    const again = await admin(c, '', 'sessions', 'POST', { id: 'S' });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('session_exists');
  });

  test('a stub added in S on B answers in S on A and C, and neither in T nor in the default session', async () => {
    const [a, b, c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    const added = await admin(b, 'S', 'stubs', 'POST', {
      endpoint: { method: 'GET', path: '/hello', response: { status: 202, body: { in: 'S' } } },
    });
    expect(added.status).toBe(201);
    for (const h of [a, c, b]) expect(await mock(h, 'S', '/hello')).toEqual({ status: 202, body: { in: 'S' } });
    for (const h of [a, b, c]) {
      expect(await mock(h, 'T', '/hello')).toEqual({ status: 200, body: { hello: true } });
      expect(await mock(h, '', '/hello')).toEqual({ status: 200, body: { hello: true } });
    }
    expect((await admin(c, 'S', 'stubs')).body.stubs).toHaveLength(1);
    expect((await admin(c, 'T', 'stubs')).body.stubs).toEqual([]);
  });

  test("a request in S on A is in S's journal on C, in one order, and not in T's or the default one", async () => {
    const [a, b, c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    expect((await mock(a, 'S', '/hello?from=a')).status).toBe(202);
    expect((await mock(b, 'S', '/hello?from=b')).status).toBe(202);
    for (const h of [c, a, b]) {
      const listed = (await admin(h, 'S', 'requests?path=/mock/hello')).body.requests as {
        id: number;
        query: Record<string, string>;
      }[];
      const froms = listed.map((e) => e.query.from).filter((f) => f !== undefined);
      expect(froms).toEqual(['a', 'b']);
      expect(listed.map((e) => e.id)).toEqual([...listed.map((e) => e.id)].sort((x, y) => x - y));
      for (const other of ['T', ''])
        expect(
          ((await admin(h, other, 'requests?path=/mock/hello')).body.requests as { query: Record<string, string> }[])
            .map((e) => e.query.from)
            .filter((f) => f !== undefined),
        ).toEqual([]);
    }
    // Its line in the list counts every host's requests: three in the stub's test, two here.
    for (const h of [a, b, c]) expect((await admin(h, '', 'sessions/S')).body.requests).toBe(5);
  });

  test('a wait in S on C wakes for a request A answered in S', async () => {
    const [a, , c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    const before = (await admin(c, 'S', 'requests')).body.requests as { id: number }[];
    const since = before[before.length - 1]!.id;
    const waiting = admin(c, 'S', `requests/wait?path=/mock/hello&since=${since}&timeout=20s`);
    // Once C's wait is open (its session lists it), A answers.
    await waitFor(async () =>
      ((await admin(c, '', 'sessions')).body.sessions as { id: string; open: number }[]).some(
        (s) => s.id === 'S' && s.open === 1,
      ),
    );
    expect((await mock(a, 'S', '/hello?from=waited')).status).toBe(202);
    const woke = await waiting;
    expect(woke.status).toBe(200);
    expect(woke.body.requests.map((e: { query: { from: string } }) => e.query.from)).toEqual(['waited']);
  });

  test("waits in S and in T on C at once each wake for their own session's request on A", async () => {
    const [a, , c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    const lastId = async (session: string) => {
      const list = (await admin(c, session, 'requests')).body.requests as { id: number }[];
      return list.length === 0 ? 0 : list[list.length - 1]!.id;
    };
    const wait = async (session: string) =>
      admin(c, session, `requests/wait?path=/mock/hello&since=${await lastId(session)}&timeout=20s`);
    const inS = wait('S');
    const inT = wait('T');
    await waitFor(async () => {
      const open = (await admin(c, '', 'sessions')).body.sessions as { id: string; open: number }[];
      return open.filter((s) => (s.id === 'S' || s.id === 'T') && s.open === 1).length === 2;
    });
    expect((await mock(a, 'T', '/hello?from=t')).status).toBe(200);
    expect((await mock(a, 'S', '/hello?from=s')).status).toBe(202);
    const [s, t] = await Promise.all([inS, inT]);
    expect(s.body.requests.map((e: { query: { from: string } }) => e.query.from)).toEqual(['s']);
    expect(t.body.requests.map((e: { query: { from: string } }) => e.query.from)).toEqual(['t']);
  });

  test("S's clock moved on A is S's on B, while T's and the default one stay", async () => {
    const [a, b] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    expect((await admin(a, 'S', 'clock', 'POST', { advance: '1d' })).body).toEqual({
      now: expect.stringMatching(/^2026-03-02T/),
    });
    expect((await admin(b, 'S', 'clock')).body.now).toMatch(/^2026-03-02T/);
    expect((await mock(b, 'S', '/now')).body.now).toMatch(/^2026-03-02T/);
    expect((await admin(b, 'T', 'clock')).body.now).toMatch(/^2026-03-01T/);
    expect((await admin(b, '', 'clock')).body.now).toMatch(/^2026-03-01T/);
  });

  test('a customer made in S on A is retrieved in S on B and C, and unknown in T', async () => {
    const [a, b, c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    const created = await mock(a, 'S', '/v1/customers', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=s%40example.com',
    });
    expect(created.status).toBe(200);
    for (const h of [b, c])
      expect(await mock(h, 'S', `/v1/customers/${created.body.id}`)).toMatchObject({
        status: 200,
        body: { id: created.body.id, email: 's@example.com' },
      });
    expect((await mock(b, 'T', `/v1/customers/${created.body.id}`)).status).toBe(404);
    expect((await mock(c, '', `/v1/customers/${created.body.id}`)).status).toBe(404);
  });

  test("S's scenario state set on A is S's on C; T's stays", async () => {
    const [a, , c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    expect((await admin(a, 'S', 'scenarios/order', 'PUT', { state: 'paid' })).body).toEqual({ order: 'paid' });
    expect((await admin(c, 'S', 'scenarios')).body).toEqual({ order: 'paid' });
    expect((await admin(c, 'T', 'scenarios')).body).toEqual({ order: 'none' });
    expect((await admin(c, '', 'scenarios')).body).toEqual({ order: 'none' });
  });

  test("an idempotent retry in S landing on another host replays; the same key in T is T's own", async () => {
    const [a, b, c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    const create = (h: ServeProcess, session: string) =>
      mock(h, session, '/v1/customers', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': 'retry-1' },
        body: 'email=r%40example.com',
      });
    const first = await create(a, 'S');
    expect(first.status).toBe(200);
    expect((await create(b, 'S')).body.id).toBe(first.body.id);
    const inT = await create(c, 'T');
    expect(inT.status).toBe(200);
    expect(inT.body.id).not.toBe(first.body.id);
  });

  test("an endpoint's rate limit in S is exact across the hosts, and S's alone", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) statuses.push((await mock(hosts[i % 3]!, 'S', '/limited')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429, 429]);
    // T's window is T's own.
    expect((await mock(hosts[1]!, 'T', '/limited')).status).toBe(200);
  });

  test('twenty sessions used on a host share one connection for their limits', async () => {
    const a = hosts[0]!;
    const connections = () => Number(/connected_clients:(\d+)/.exec(redis.cli('INFO', 'clients'))?.[1]);
    const before = connections();
    for (let i = 0; i < 20; i++) expect((await mock(a, `many-${i}`, '/limited')).status).toBe(200);
    expect(connections() - before).toBeLessThanOrEqual(1);
    for (let i = 0; i < 20; i++) expect((await admin(a, '', `sessions/many-${i}`, 'DELETE')).status).toBe(200);
  });

  test('S dropped on B is gone on A and C, its stubs, journal and counts with it; T stays', async () => {
    const [a, b, c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    // S's counts of the key `ci` (its window, month and endpoint window) beside those of apiKey.
    expect((await mock(c, 'S', '/limited', { headers: { 'x-api-key': CI_KEY } })).status).toBe(200);
    expect(redis.cli('--scan', '--pattern', '{mockapi:fleet-sessions}:s:S:key:ci:ep:*')).not.toBe('');
    expect(await admin(b, '', 'sessions/S', 'DELETE')).toEqual({ status: 200, body: { deleted: 'S' } });
    for (const h of [a, c]) {
      expect(ids((await admin(h, '', 'sessions')).body.sessions)).toEqual(['T']);
      expect((await admin(h, '', 'sessions/S')).status).toBe(404);
    }
    expect(redis.cli('--scan', '--pattern', '{mockapi:fleet-sessions}:fleet:s:S:*')).toBe('');
    // Its limit windows, months and endpoint windows, the key's too; T's stay.
    expect(redis.cli('--scan', '--pattern', '{mockapi:fleet-sessions}:s:S:*')).toBe('');
    expect(redis.cli('--scan', '--pattern', '{mockapi:fleet-sessions}:s:T:*')).not.toBe('');
    // Named again, S is a new session: none of the old one's stubs or requests.
    expect(await mock(a, 'S', '/hello')).toEqual({ status: 200, body: { hello: true } });
    expect((await admin(c, 'S', 'requests?path=/mock/hello')).body.requests).toHaveLength(1);
  });

  test("a host started after them answers a session's changes at once, though it holds none of its parts, without a warning", async () => {
    const a = hosts[0]!;
    const fresh = await host('fresh');
    try {
      // Each of these waits for every host's answer (the last ones after the scenarios' told changes):
      // once they are back, the fresh host has read them all.
      const stub = { endpoint: { method: 'GET', path: '/hello', response: { status: 202 } } };
      expect((await admin(a, 'WS', 'stubs', 'POST', stub)).status).toBe(201);
      expect((await admin(a, 'WS', 'scenarios/order', 'PUT', { state: 'paid' })).status).toBe(200);
      expect((await admin(a, 'WS', 'clock', 'POST', { advance: '1h' })).status).toBe(200);
      expect((await admin(a, 'WS', 'requests', 'DELETE')).status).toBe(200);
      expect((await admin(a, 'WS', 'reset', 'POST', {})).status).toBe(200);
      expect((await admin(a, 'WS', 'stubs', 'DELETE')).status).toBe(200);
      expect(fresh.stderr()).not.toContain('fleet: skipped');
      // Asked, it reads the session from Redis: the state set before it held any of it.
      expect((await admin(a, 'WS', 'scenarios/order', 'PUT', { state: 'shipped' })).status).toBe(200);
      expect((await admin(fresh, 'WS', 'scenarios')).body).toEqual({ order: 'shipped' });
      expect(fresh.stderr()).not.toContain('fleet: skipped');
    } finally {
      await fresh.stop();
      await admin(a, '', 'sessions/WS', 'DELETE');
    }
  });
});

describe.runIf(hasRedisServer())("the fleet's sessions.max, sessions.ttl and sessions.byKey", () => {
  const LIMITED = CONFIG.replace('limits:\n', 'sessions: { byKey: true, max: 2, ttl: 3s }\nlimits:\n').replace(
    'project: fleet-sessions',
    'project: fleet-sessions-settings',
  );
  let trio: ServeProcess[] = [];
  beforeAll(async () => {
    trio = await Promise.all(['d', 'e', 'f'].map((name) => host(name, LIMITED)));
  }, 120_000);
  afterAll(async () => {
    await Promise.all(trio.map((h) => h.stop()));
  });

  test("a key made on D puts a request on E in its session, which F's journal of it lists", async () => {
    const [d, e, f] = trio as [ServeProcess, ServeProcess, ServeProcess];
    const made = await admin(d, '', 'sessions', 'POST', { id: 'K' });
    expect(made.status).toBe(201);
    expect(made.body.key).toMatch(/^mk_/);
    const answered = await json(`${e.mock}/hello?by=key`, { headers: { 'x-api-key': made.body.key } });
    expect(answered.status).toBe(200);
    const listed = (await admin(f, 'K', 'requests')).body.requests as { query: Record<string, string> }[];
    expect(listed.map((r) => r.query.by)).toEqual(['key']);
    expect((await admin(f, '', 'requests')).body.requests).toEqual([]);
  });

  test("sessions.max counts every host's sessions", async () => {
    const [d, e, f] = trio as [ServeProcess, ServeProcess, ServeProcess];
    expect((await admin(e, '', 'sessions', 'POST', { id: 'L' })).status).toBe(201);
    const third = await admin(f, '', 'sessions', 'POST', { id: 'M' });
    expect(third.status).toBe(429);
    expect(third.body.error).toBe('too_many_sessions');
    expect((await admin(d, '', 'sessions', 'POST', { id: 'M' })).status).toBe(429);
  });

  test('a session used on one host only outlives sessions.ttl on every host; idle, it goes from all', async () => {
    const [d, e, f] = trio as [ServeProcess, ServeProcess, ServeProcess];
    // K is used on E alone, every half second, for longer than its ttl: D and F keep it.
    const until = Date.now() + 5000;
    while (Date.now() < until) {
      expect((await mock(e, 'K', '/hello')).status).toBe(200);
      await new Promise((r) => setTimeout(r, 500));
    }
    for (const h of [d, f]) expect(ids((await admin(h, '', 'sessions')).body.sessions)).toContain('K');
    // L, never used after it was made, is gone from every host; then K too, once nobody uses it.
    for (const h of [d, e, f])
      await waitFor(async () => !ids((await admin(h, '', 'sessions')).body.sessions).includes('L'), 15_000, 100);
    for (const h of [d, e, f])
      await waitFor(async () => (await admin(h, '', 'sessions')).body.sessions.length === 0, 15_000, 100);
  });
});

describe.runIf(hasRedisServer())('serve --workers with a fleet: each worker a host, sessions shared', () => {
  let served: ServeProcess | undefined;
  const project = 'fleet-sessions-workers';
  afterAll(async () => {
    await served?.stop();
  });

  test('a stub added in a session through one worker answers in it through the other', async () => {
    const folder = join(dir.path, 'workers');
    await mkdir(folder, { recursive: true });
    const file = join(folder, 'mockapi.yaml');
    await writeFile(file, CONFIG.replace('project: fleet-sessions', `project: ${project}`));
    served = await startServe(['-c', file, '--log', 'off', '--workers', '2'], {
      env: { MOCKAPI_REDIS_URL: redis.url },
    });
    // Each worker is a host of the fleet, at a loopback port of its own.
    const workers = await waitFor(() => {
      const text = redis.cli('HVALS', `{mockapi:${project}}:fleet:hosts`);
      const found =
        text === '' ? [] : text.split('\n').map((line) => (JSON.parse(line) as { address: string }).address);
      return found.length === 2 ? found : undefined;
    });
    const [one, two] = workers.map((url) => ({ url, mock: `${url}/mock` }) as ServeProcess) as [
      ServeProcess,
      ServeProcess,
    ];
    expect((await admin(one, '', 'sessions', 'POST', { id: 'W' })).status).toBe(201);
    expect(ids((await admin(two, '', 'sessions')).body.sessions)).toEqual(['W']);
    const added = await admin(one, 'W', 'stubs', 'POST', {
      endpoint: { method: 'GET', path: '/hello', response: { status: 203, body: { in: 'W' } } },
    });
    expect(added.status).toBe(201);
    expect(await mock(two, 'W', '/hello')).toEqual({ status: 203, body: { in: 'W' } });
    expect(await mock(two, '', '/hello')).toEqual({ status: 200, body: { hello: true } });
    expect((await admin(one, 'W', 'requests')).body.requests).toHaveLength(1);
  });

  test('with Redis hanging, making or dropping a session is 503 store_unavailable, and W stays', async () => {
    const addresses = redis.cli('HVALS', `{mockapi:${project}}:fleet:hosts`).split('\n');
    const one = { url: (JSON.parse(addresses[0]!) as { address: string }).address } as ServeProcess;
    redis.pause();
    try {
      const made = await admin(one, '', 'sessions', 'POST', { id: 'X' });
      expect(made.status).toBe(503);
      expect(made.body.error).toBe('store_unavailable');
      const dropped = await admin(one, '', 'sessions/W', 'DELETE');
      expect(dropped.status).toBe(503);
    } finally {
      redis.resume();
    }
    expect(ids((await admin(one, '', 'sessions')).body.sessions)).toEqual(['W']);
  });
});
