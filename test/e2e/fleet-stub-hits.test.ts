// A run-time stub's `hits` on a fleet: three `mockapi serve` hosts (the built CLI) on one
// redis-server. `GET /__mockapi/stubs` on every host gives the fleet's hits, as it gives the
// fleet's `remaining`: a spec audit found a `times: 5` stub answered twice by A listed with
// `remaining: 3` everywhere but `hits: 2` on A and 0 on B and C. A stub with `times` and one
// without, answered by every host; a stub removed and added again starts from 0, and a reset
// leaves no hits behind in Redis.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServe, useTempDir, type ServeProcess } from '../helpers/cli.js';
import { hasRedisServer, startRedis, type RedisServer } from '../helpers/redis.js';

const KEY = 'mk_fleet_hits_key_00000000000000000001';
const CONFIG = `project: fleet-hits
apiKey: ${KEY}
fleet: { store: "\${env.MOCKAPI_REDIS_URL}" }
endpoints:
  - method: GET
    path: /hello
    response: { body: { hello: true } }
`;

/** Where the fleet keeps the hits (src/fleet/keys.ts): a removal and a reset must leave none. */
const HITS = '{mockapi:fleet-hits}:fleet:stub-hits';

const dir = useTempDir('mockapi-fleet-hits-');
let redis: RedisServer;
let hosts: ServeProcess[] = [];

async function host(name: string): Promise<ServeProcess> {
  const folder = join(dir.path, name);
  await mkdir(folder, { recursive: true });
  const file = join(folder, 'mockapi.yaml');
  await writeFile(file, CONFIG);
  return startServe(['-c', file, '--log', 'off'], { env: { MOCKAPI_REDIS_URL: redis.url } });
}

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}
const mock = (h: ServeProcess, path: string) => json(`${h.mock}${path}`, { headers: { 'x-api-key': KEY } });
const admin = (h: ServeProcess, path: string, method = 'GET', body?: unknown) =>
  json(`${h.url}/__mockapi/${path}`, {
    method,
    ...(method === 'GET' ? {} : { headers: { 'content-type': 'application/json' } }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
/** Each host's list: name → { remaining, hits }. */
const lists = () =>
  Promise.all(
    hosts.map(async (h) => {
      const stubs = (await admin(h, 'stubs')).body.stubs as { name: string; remaining: number | null; hits: number }[];
      return Object.fromEntries(stubs.map((s) => [s.name, { remaining: s.remaining, hits: s.hits }]));
    }),
  );

beforeAll(async () => {
  redis = await startRedis();
  hosts = await Promise.all(['a', 'b', 'c'].map(host));
}, 120_000);
afterAll(async () => {
  await Promise.all(hosts.map((h) => h.stop()));
  await redis?.stop();
});

describe.runIf(hasRedisServer())("a stub's hits on a fleet are every host's", () => {
  test('hits spread over three hosts: every host lists the same hits, with times and without', async () => {
    const [a, b, c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    const t5 = await admin(b, 'stubs', 'POST', {
      name: 't5',
      times: 5,
      endpoint: { method: 'GET', path: '/t5', response: { body: { msg: 't5' } } },
    });
    expect(t5.status).toBe(201);
    const always = await admin(b, 'stubs', 'POST', {
      name: 'always',
      endpoint: { method: 'GET', path: '/always', response: { body: { msg: 'always' } } },
    });
    expect(always.status).toBe(201);

    // The audit's case: answered twice by A, listed on every host just after.
    for (const h of [a, a]) expect(await mock(h, '/t5')).toMatchObject({ status: 200, body: { msg: 't5' } });
    const after2 = { t5: { remaining: 3, hits: 2 }, always: { remaining: null, hits: 0 } };
    expect(await lists()).toEqual([after2, after2, after2]);

    // Spread over every host, each answer listed on every host at once (read right after the answers).
    for (const h of [c, b]) expect((await mock(h, '/t5')).status).toBe(200);
    for (const h of [a, b, b, c, c, c]) expect(await mock(h, '/always')).toMatchObject({ status: 200 });
    const spread = { t5: { remaining: 1, hits: 4 }, always: { remaining: null, hits: 6 } };
    expect(await lists()).toEqual([spread, spread, spread]);
  });

  test('a stub removed and added again starts from 0 hits; a reset leaves none in Redis', async () => {
    const [a, b, c] = hosts as [ServeProcess, ServeProcess, ServeProcess];
    const listed = (await admin(c, 'stubs')).body.stubs as { id: string; name: string }[];
    const always = listed.find((s) => s.name === 'always')!;
    expect(redis.cli('HEXISTS', HITS, always.id)).toBe('1');
    expect((await admin(c, `stubs/${always.id}`, 'DELETE')).status).toBe(200);
    expect(redis.cli('HEXISTS', HITS, always.id)).toBe('0');
    expect(
      (
        await admin(a, 'stubs', 'POST', {
          name: 'always',
          endpoint: { method: 'GET', path: '/always', response: { body: { msg: 'again' } } },
        })
      ).status,
    ).toBe(201);
    expect(await mock(b, '/always')).toMatchObject({ status: 200, body: { msg: 'again' } });
    for (const list of await lists()) expect(list.always).toEqual({ remaining: null, hits: 1 });

    expect(redis.cli('EXISTS', HITS)).toBe('1');
    expect((await admin(b, 'reset', 'POST', {})).status).toBe(200);
    for (const list of await lists()) expect(list).toEqual({});
    expect(redis.cli('EXISTS', HITS)).toBe('0');
  });
});
