// A fleet: three `mockapi serve` processes, each with its own copy of one config in a folder of its
// own (as on three machines), and one redis-server; requests driven round-robin as a load balancer
// would. What one host does, the others see: stubs, the journal in one order, waits, resources and
// idempotency keys, the virtual clock, scenario states, limits, the HTTPS CA, a key rotation, a
// lifecycle's webhook sent once. Named sessions shared by the fleet: fleet-sessions-e2e.test.ts.
import { createServer, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCli, startServe, useTempDir, waitFor, type ServeProcess } from '../helpers/cli.js';
import { hasRedisServer, startRedis, type RedisServer } from '../helpers/redis.js';

const KEY = 'mk_fleet_e2e_key_0000000000000000001';
// The receiver's port is put in once it listens (before the hosts start).
const CONFIG_TEMPLATE = `project: fleet-e2e
apiKey: ${KEY}
fleet: { store: "\${env.MOCKAPI_REDIS_URL}" }
server:
  https: { port: 0 }
limits:
  monthlyQuota: 1000000
scenarios:
  order: { initial: none }
webhooks:
  targets:
    app: { url: "http://127.0.0.1:RECEIVER_PORT/hook", retry: { schedule: none, timeout: 5s } }
endpoints:
  - method: GET
    path: /hello
    response: { body: { hello: true } }
  - method: GET
    path: /now
    response: { body: { now: "\${now}" } }
resources:
  customers:
    style: stripe
    path: /v1/customers
    fields: { object: customer, email: null, metadata: {} }
  payment_intents:
    style: stripe
    path: /v1/payment_intents
    fields: { object: payment_intent, status: processing }
    lifecycle:
      - { from: processing, after: 1h, to: succeeded, send: [payment_intent.succeeded] }
`;
let CONFIG = CONFIG_TEMPLATE;
const received: { type: string; id: string }[] = [];
let receiver: Server;

const dir = useTempDir('mockapi-fleet-');
let redis: RedisServer;
let hosts: ServeProcess[] = [];
const files: string[] = [];

async function host(name: string, config = CONFIG, extra: string[] = []): Promise<ServeProcess> {
  const folder = join(dir.path, name);
  await mkdir(folder, { recursive: true });
  const file = join(folder, 'mockapi.yaml');
  await writeFile(file, config);
  files.push(file);
  return startServe(['-c', file, '--log', 'off', '--clock', '2026-03-01T00:00:00Z', ...extra], {
    env: { MOCKAPI_REDIS_URL: redis.url },
  });
}

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) };
}
const mock = (h: ServeProcess, path: string, init: RequestInit = {}) =>
  json(`${h.mock}${path}`, { ...init, headers: { 'x-api-key': KEY, ...(init.headers as Record<string, string>) } });
const admin = (h: ServeProcess, path: string, method = 'GET', body?: unknown) =>
  json(`${h.url}/__mockapi/${path}`, {
    method,
    ...(method === 'GET' ? {} : { headers: { 'content-type': 'application/json' } }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const portOf = (h: ServeProcess) => new URL(h.url).port;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const event = JSON.parse(body) as { type: string; data: { object: { id: string } } };
      received.push({ type: event.type, id: event.data.object.id });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  CONFIG = CONFIG_TEMPLATE.replace('RECEIVER_PORT', String((receiver.address() as AddressInfo).port));
  redis = await startRedis({ tcp: true });
  hosts = await Promise.all(['a', 'b', 'c'].map((name) => host(name)));
}, 120_000);
afterAll(async () => {
  await Promise.all(hosts.map((h) => h.stop()));
  await redis?.stop();
  await new Promise((r) => receiver?.close(r));
});

describe.runIf(hasRedisServer())('three hosts of one fleet, driven round-robin', () => {
  test('a stub added on B answers on A and C, and every host lists it', async () => {
    const [a, b, c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    const added = await admin(b, 'stubs', 'POST', {
      name: 'from-b',
      endpoint: { method: 'GET', path: '/stubbed', response: { status: 202, body: { by: 'b' } } },
    });
    expect(added.status).toBe(201);
    for (const h of [a, c, b]) expect(await mock(h, '/stubbed')).toMatchObject({ status: 202, body: { by: 'b' } });
    for (const h of [a, c])
      expect((await admin(h, 'stubs')).body.stubs.map((s: { name: string }) => s.name)).toEqual(['from-b']);
    // A stub's name is the fleet's: the same name on another host is refused there.
    const again = await admin(c, 'stubs', 'POST', {
      name: 'from-b',
      endpoint: { method: 'GET', path: '/other', response: { body: {} } },
    });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_stub');
    // Removed on A: gone everywhere.
    expect((await admin(a, `stubs/${added.body.id}`, 'DELETE')).status).toBe(200);
    for (const h of [b, c]) expect((await mock(h, '/stubbed')).status).toBe(404);
  });

  test('a stub with times answers that many times across the hosts, exactly', async () => {
    const [a, b, c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    expect(
      (
        await admin(a, 'stubs', 'POST', {
          times: 4,
          endpoint: { method: 'GET', path: '/four', response: { body: { left: true } } },
        })
      ).status,
    ).toBe(201);
    const statuses = [];
    for (let i = 0; i < 9; i++) statuses.push((await mock(hosts[i % 3]!, '/four')).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(4);
    expect(statuses.slice(0, 4)).toEqual([200, 200, 200, 200]);
    for (const h of [a, b, c]) expect((await admin(h, 'stubs')).body.stubs).toEqual([]);
  });

  test('the journal lists the three hosts requests in one order, the same on every host', async () => {
    for (let i = 0; i < 9; i++) expect((await mock(hosts[i % 3]!, `/hello?round=${i}`)).status).toBe(200);
    const lists = await Promise.all(
      hosts.map(
        async (h) =>
          (await admin(h, 'requests?path=/mock/hello&limit=9')).body.requests as {
            id: number;
            query: { round: string };
            headers: { host: string };
          }[],
      ),
    );
    for (const list of lists) {
      expect(list.map((e) => e.query.round)).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8']);
      expect(list.map((e) => e.headers.host.split(':')[1])).toEqual(
        [0, 1, 2, 0, 1, 2, 0, 1, 2].map((i) => portOf(hosts[i]!)),
      );
      expect(list.map((e) => e.id)).toEqual(lists[0]!.map((e) => e.id));
    }
    const ids = lists[0]!.map((e) => e.id);
    expect([...ids].sort((x, y) => x - y)).toEqual(ids);
    expect(new Set(ids).size).toBe(9);
    // Counts and endpoints cover every host too.
    expect((await admin(hosts[1]!, 'requests/count?path=/mock/hello')).body.count).toBeGreaterThanOrEqual(9);
    const endpoints = (await admin(hosts[2]!, 'endpoints')).body.endpoints as {
      endpoint: string;
      requests: number;
      answerDetails: { name: string; requests: number }[];
    }[];
    const hello = endpoints.find((e) => e.endpoint === 'GET /hello')!;
    expect(hello.requests).toBeGreaterThanOrEqual(9);
    // Each answer's hits too: the fleet's, not this host's third.
    expect(hello.answerDetails.map((d) => d.requests)).toEqual([hello.requests]);
  });

  test('a wait on C wakes for a request A answered', async () => {
    const [a, , c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    const since = Math.max(0, ...((await admin(c, 'requests')).body.requests as { id: number }[]).map((e) => e.id));
    const waiting = admin(c, `requests/wait?path=/mock/hello&since=${since}&timeout=20s`);
    // The wait listens before it answers nothing: sent after a request that C itself journaled.
    await mock(c, '/now');
    expect((await admin(c, `requests/wait?path=/mock/now&since=${since}&timeout=10s`)).status).toBe(200);
    expect((await mock(a, '/hello?from=a')).status).toBe(200);
    const woke = await waiting;
    expect(woke.status).toBe(200);
    expect(woke.body.requests).toHaveLength(1);
    expect(woke.body.requests[0]).toMatchObject({ path: '/mock/hello', query: { from: 'a' }, status: 200 });
    expect(woke.body.requests[0].headers.host).toBe(`127.0.0.1:${portOf(a)}`);
  });

  test("the event stream on C tells of a request A answered, with the fleet's id", async () => {
    const [a, , c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    const stream = new AbortController();
    const res = await fetch(`${c.url}/__mockapi/events`, { signal: stream.signal });
    expect(res.status).toBe(200);
    // Open (the answer's head came): it hears every entry added from now on.
    expect((await mock(a, '/hello?from=events')).status).toBe(200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    let event: RegExpExecArray | null = null;
    while (event === null) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
      event = /event: request\ndata: (.*"from":"events".*)\n\n/.exec(text);
    }
    stream.abort();
    const told = JSON.parse(event![1]!) as { id: number; headers: { host: string } };
    expect(told.headers.host).toBe(`127.0.0.1:${portOf(a)}`);
    const listed = (await admin(c, 'requests?path=/mock/hello&limit=1')).body.requests as { id: number }[];
    expect(listed.map((e) => e.id)).toEqual([told.id]);
  });

  test('create on A, retrieve on B, list on C; an idempotent retry on another host replays', async () => {
    const [a, b, c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const created = await mock(a, '/v1/customers', { method: 'POST', headers: form, body: 'email=ada%40example.com' });
    expect(created.status).toBe(200);
    expect((await mock(b, `/v1/customers/${created.body.id}`)).body).toEqual(created.body);
    const listed = await mock(c, '/v1/customers?email=ada%40example.com');
    expect(listed.body.data).toEqual([created.body]);

    const once = { ...form, 'idempotency-key': 'fleet-retry-1' };
    const first = await mock(a, '/v1/customers', { method: 'POST', headers: once, body: 'email=grace%40example.com' });
    const retry = await mock(b, '/v1/customers', { method: 'POST', headers: once, body: 'email=grace%40example.com' });
    expect(retry.status).toBe(first.status);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect((await mock(c, '/v1/customers?email=grace%40example.com')).body.data).toHaveLength(1);
  });

  test('the clock moved on A is seen by B and C, and by what they answer', async () => {
    const [a, b, c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    const before = Date.parse((await admin(b, 'clock')).body.now);
    const moved = await admin(a, 'clock', 'POST', { advance: '30d' });
    expect(moved.status).toBe(200);
    for (const h of [b, c]) {
      const now = Date.parse((await admin(h, 'clock')).body.now);
      expect(now).toBeGreaterThanOrEqual(Date.parse(moved.body.now));
      expect(now - before).toBeGreaterThanOrEqual(30 * 86_400_000);
      expect(Date.parse((await mock(h, '/now')).body.now)).toBeGreaterThanOrEqual(Date.parse(moved.body.now));
    }
  });

  test('a lifecycle move passed by a clock moved on B is made by one host: its webhook is sent once', async () => {
    const [a, b, c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    const created = await mock(a, '/v1/payment_intents', { method: 'POST' });
    expect(created.body.status).toBe('processing');
    expect((await admin(b, 'clock', 'POST', { advance: '2h' })).status).toBe(200);
    // A read takes the moves it is due: each host has tried the move once these answer.
    for (const h of [c, a, b])
      expect((await mock(h, `/v1/payment_intents/${created.body.id}`)).body.status).toBe('succeeded');
    // The winner of the move sends the event; a host whose write lost sends none.
    await waitFor(() => received.some((e) => e.id === created.body.id) || undefined);
    const made = await Promise.all(
      hosts.map(
        async (h) =>
          (await admin(h, 'webhooks/deliveries?event=payment_intent.succeeded')).body.deliveries as unknown[],
      ),
    );
    expect(made.flat()).toHaveLength(1);
    expect(received.filter((e) => e.id === created.body.id)).toEqual([
      { type: 'payment_intent.succeeded', id: created.body.id },
    ]);
  });

  test('a scenario state set on A is every host state', async () => {
    const [a, b, c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    expect((await admin(a, 'scenarios/order', 'PUT', { state: 'paid' })).body).toEqual({ order: 'paid' });
    for (const h of [b, c]) expect((await admin(h, 'scenarios')).body).toEqual({ order: 'paid' });
  });

  test('every host presents a certificate of one CA, made once, which each serves', async () => {
    const pems = await Promise.all(hosts.map(async (h) => (await fetch(`${h.url}/__mockapi/tls/ca.pem`)).text()));
    expect(new Set(pems).size).toBe(1);
    expect(pems[0]).toMatch(/^-----BEGIN CERTIFICATE-----/);
    for (const h of hosts) {
      const status = await new Promise<number>((done, fail) => {
        const req = httpsRequest(`${h.httpsUrl}/mock/hello`, { ca: pems[0], headers: { 'x-api-key': KEY } }, (res) => {
          res.resume();
          done(res.statusCode ?? 0);
        });
        req.once('error', fail);
        req.end();
      });
      expect(status).toBe(200);
    }
    // Each folder holds that CA, as `mockapi tls path` names it.
    for (const file of files.slice(0, 3))
      expect(await readFile(join(file, '..', '.mockapi', 'tls', 'ca.pem'), 'utf8')).toBe(pems[0]);
  });

  test('fleet status lists the three hosts with one config hash', async () => {
    const env = { env: { MOCKAPI_REDIS_URL: redis.url } };
    const [status, table] = await Promise.all([
      runCli(['fleet', 'status', '-c', files[0]!, '--json'], env),
      runCli(['fleet', 'status', '-c', files[0]!], env),
    ]);
    expect(status.code).toBe(0);
    const report = JSON.parse(status.stdout) as {
      hosts: { address: string; alive: boolean; config: string }[];
      configs: string[];
    };
    expect(
      report.hosts
        .filter((h) => h.alive)
        .map((h) => h.address)
        .sort(),
    ).toEqual(hosts.map((h) => h.url).sort());
    expect(report.configs).toHaveLength(1);
    expect(status.stderr).toBe('');
    expect(table.stdout).toMatch(
      /^fleet of fleet-e2e through redis:\/\/127\.0\.0\.1:\d+: 3 hosts\nADDRESS +HOST +PID +VERSION +CONFIG +LAST SEEN\n/,
    );
  });

  test('a key rotated on A is served by B and C, each from its own file', async () => {
    const [a, b, c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    const rotated = await admin(a, 'rotate-key', 'POST', { key: 'mk_fleet_e2e_rotated_000000000000001' });
    expect(rotated.status).toBe(200);
    for (const file of files.slice(0, 3))
      expect(await readFile(file, 'utf8')).toContain('apiKey: mk_fleet_e2e_rotated_000000000000001');
    for (const h of [b, c, a]) {
      expect((await mock(h, '/hello')).status).toBe(401);
      expect(
        (await json(`${h.mock}/hello`, { headers: { 'x-api-key': 'mk_fleet_e2e_rotated_000000000000001' } })).status,
      ).toBe(200);
    }
    // Back, through the command this time: every host registered in the store confirms.
    const back = await runCli(['rotate-key', '-c', files[1]!, '--key', KEY], { env: { MOCKAPI_REDIS_URL: redis.url } });
    expect(back.code).toBe(0);
    expect(back.stderr).toContain('fleet: 3 of 3 hosts registered in the store confirmed the new apiKey');
    for (const h of hosts) expect((await mock(h, '/hello')).status).toBe(200);
  });

  test("a host started later takes the fleet's clock; with another config, it is warned about, on the hosts and by fleet status", async () => {
    // A host that starts later takes the fleet's time, not its own --clock.
    const fleetNow = Date.parse((await admin(hosts[0]!, 'clock', 'POST', { advance: '1d' })).body.now);
    const other = await host('d', CONFIG.replace('path: /now', 'path: /later'));
    expect(Date.parse((await admin(other, 'clock')).body.now)).toBeGreaterThanOrEqual(fleetNow);
    // And its start line says so: the fleet's time, not where its --clock would have started it.
    await other.waitForOutput(/virtual clock/);
    const line =
      /virtual clock: took the fleet's, now (\S+) \(in place of --clock 2026-03-01T00:00:00\.000Z\); move it with POST \/__mockapi\/clock\n/.exec(
        other.stderr(),
      );
    expect(line, other.stderr()).not.toBeNull();
    expect(Date.parse(line![1]!)).toBeGreaterThanOrEqual(fleetNow);
    expect(other.stderr()).not.toContain('virtual clock started at');
    await other.waitForOutput(
      /fleet: host http:\/\/127\.0\.0\.1:\d+ \(.+\) serves config [0-9a-f]{12}, this host [0-9a-f]{12}/,
    );
    await waitFor(() => /serves config [0-9a-f]{12}, this host/.test(hosts[0]!.stderr()), 15_000, 50);
    const status = await runCli(['fleet', 'status', '-c', files[0]!], { env: { MOCKAPI_REDIS_URL: redis.url } });
    expect(status.code).toBe(0);
    expect(status.stderr).toMatch(/^warning: the hosts serve 2 different configs/);
    await other.stop();
  });
});
