// A fleet whose Redis restarts empty (no persistence, a failover without it): the hosts put back the
// run-time stubs, the named sessions (and a session's own stubs) and the scenario states they were
// serving, so the fleet keeps serving what it served; a stub deleted on purpose before stays deleted,
// and two hosts putting back at once do not make two of one stub.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServe, useTempDir, waitFor, type ServeProcess } from '../helpers/cli.js';
import { hasRedisServer, startRedis, type RedisServer } from '../helpers/redis.js';

const KEY = 'mk_fleet_refill_key_0000000000000001';
const dir = useTempDir('mockapi-fleet-refill-');
let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

let started = 0;
async function host(project: string): Promise<ServeProcess> {
  const yaml = `project: ${project}\napiKey: ${KEY}\nfleet: { store: ${redis.url} }\nscenarios:\n  order: { initial: none }\nendpoints:\n  - method: GET\n    path: /a\n`;
  const folder = join(dir.path, `${project}-${started++}`);
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, 'mockapi.yaml'), yaml);
  return startServe(['-c', join(folder, 'mockapi.yaml'), '--log', 'off', '--no-state']);
}
async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}
const mock = (h: ServeProcess, path: string, session = '') =>
  json(`${h.mock}${path}`, {
    headers: { 'x-api-key': KEY, ...(session === '' ? {} : { 'x-mockapi-session': session }) },
  });
const admin = (h: ServeProcess, path: string, method = 'GET', body?: unknown) =>
  json(`${h.url}/__mockapi/${path}`, {
    method,
    ...(method === 'GET' ? {} : { headers: { 'content-type': 'application/json' } }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const stub = (path: string, answer: string) => ({
  endpoint: { method: 'GET', path, response: { body: { answer } } },
});
const paths = async (h: ServeProcess, session = '') =>
  (
    (await admin(h, `stubs${session === '' ? '' : `?session=${session}`}`)).body.stubs as {
      endpoint: { path: string };
    }[]
  )
    .map((s) => s.endpoint.path)
    .sort();
const sessions = async (h: ServeProcess) =>
  ((await admin(h, 'sessions')).body.sessions as { id: string }[]).map((s) => s.id).sort();

describe.runIf(hasRedisServer())('a fleet whose Redis restarts empty', () => {
  test('both hosts put back what they served: stubs and sessions answer again everywhere, a deleted stub stays deleted', async () => {
    const [a, b] = await Promise.all([host('refill'), host('refill')]);
    expect((await admin(a, 'stubs', 'POST', stub('/pre', 'pre'))).status).toBe(201);
    const gone = await admin(a, 'stubs', 'POST', stub('/gone', 'gone'));
    expect(gone.status).toBe(201);
    expect((await admin(a, `stubs/${gone.body.id as string}`, 'DELETE')).status).toBe(200);
    expect((await admin(a, 'sessions', 'POST', { id: 'keep' })).status).toBe(201);
    expect((await admin(a, 'stubs?session=keep', 'POST', stub('/in-keep', 'keep'))).status).toBe(201);
    expect((await admin(a, 'scenarios/order', 'PUT', { state: 'paid' })).status).toBe(200);
    for (const h of [a, b]) {
      expect(await mock(h, '/pre')).toEqual({ status: 200, body: { answer: 'pre' } });
      expect((await mock(h, '/gone')).status).toBe(404);
      expect(await mock(h, '/in-keep', 'keep')).toEqual({ status: 200, body: { answer: 'keep' } });
      expect(await sessions(h)).toEqual(['keep']);
    }

    await redis.restart();
    // Both hosts back: subscribed to the fleet's channel again (each catches up once it is).
    await waitFor(() => redis.cli('PUBSUB', 'NUMSUB', 'mockapi:refill:fleet').endsWith('2'), 20_000, 50);
    // Redis holds the fleet's state again: what a host that starts now takes.
    await waitFor(
      () =>
        redis.cli('HLEN', '{mockapi:refill}:fleet:stubs') === '1' &&
        redis.cli('HEXISTS', '{mockapi:refill}:fleet:sessions', 'keep') === '1' &&
        redis.cli('HLEN', '{mockapi:refill}:fleet:s:keep:stubs') === '1',
      15_000,
      50,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\nA: ${a.stderr()}\nB: ${b.stderr()}\nkeys: ${redis.cli('KEYS', '*')}`);
    });
    const late = await host('refill');
    for (const h of [a, b, late]) {
      await waitFor(async () => (await paths(h)).length === 1, 10_000, 50);
      expect(await paths(h)).toEqual(['/pre']); // one, however many hosts put it back
      expect(await mock(h, '/pre')).toEqual({ status: 200, body: { answer: 'pre' } });
      expect((await mock(h, '/gone')).status).toBe(404);
      expect(await sessions(h)).toEqual(['keep']);
      expect(await paths(h, 'keep')).toEqual(['/in-keep']);
      expect(await mock(h, '/in-keep', 'keep')).toEqual({ status: 200, body: { answer: 'keep' } });
      expect((await admin(h, 'scenarios')).body).toEqual({ order: 'paid' });
    }
    // Put back once: a change now is the fleet's, as before the restart.
    const id = ((await admin(b, 'stubs')).body.stubs as { id: string }[])[0]!.id;
    expect((await admin(b, `stubs/${id}`, 'DELETE')).status).toBe(200);
    for (const h of [a, b, late]) expect((await mock(h, '/pre')).status).toBe(404);
    await Promise.all([a.stop(), b.stop(), late.stop()]);
  }, 90_000);

  test('a stub removed on one host while Redis was away stays removed, whichever host puts back first', async () => {
    const [a, b] = await Promise.all([host('meanwhile'), host('meanwhile')]);
    const added = await admin(a, 'stubs', 'POST', stub('/old', 'old'));
    expect(added.status).toBe(201);
    expect((await admin(a, 'stubs', 'POST', stub('/kept', 'kept'))).status).toBe(201);
    for (const h of [a, b]) expect(await paths(h)).toEqual(['/kept', '/old']);
    await redis.kill();
    await a.waitForOutput(/fleet: Redis unix:\/\/\S+ is away/);
    await b.waitForOutput(/fleet: Redis unix:\/\/\S+ is away/);
    // Removed on A alone: B, which did not hear it, still holds it when Redis comes back empty.
    expect((await admin(a, `stubs/${added.body.id as string}`, 'DELETE')).status).toBe(200);
    expect(await paths(b)).toEqual(['/kept', '/old']);
    await redis.restart();
    await waitFor(
      async () =>
        redis.cli('HLEN', '{mockapi:meanwhile}:fleet:stubs') === '1' &&
        (await paths(a)).join() === '/kept' &&
        (await paths(b)).join() === '/kept',
      15_000,
      50,
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}\nA: ${(await paths(a)).join()} B: ${(await paths(b)).join()}\n${b.stderr()}`);
    });
    for (const h of [a, b]) {
      expect((await mock(h, '/old')).status).toBe(404);
      expect(await mock(h, '/kept')).toEqual({ status: 200, body: { answer: 'kept' } });
    }
    await Promise.all([a.stop(), b.stop()]);
  }, 90_000);
});
