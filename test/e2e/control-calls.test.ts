// SPEC §6/§8: the control calls on startMockServer's object and on connectMockServer(url) give the
// same answers; reset, usage, rotate-key (waits until the new key is served), scenarios, events.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readFile } from 'node:fs/promises';
import { request } from 'undici';
import { startMockServer, type MockServer } from '../../src/mock-server.js';
import { connectMockServer } from '../../src/connect.js';
import { ControlError, WaitTimeoutError } from '../../src/control/control-error.js';
import { useTempDir, writeConfig } from '../helpers/cli.js';
import { admin, mock } from '../helpers/control.js';

const KEY = 'mk_callsKey000000000000000000000001';
const YAML = `apiKey: ${KEY}\nlimits:\n  rateLimit: { requests: 100, window: 1m }\n  monthlyQuota: 1000\nendpoints:\n  - method: POST\n    path: /orders\n    response: { status: 201 }\n`;
const dir = useTempDir('mockapi-calls-');
let server: MockServer;
let file: string;
beforeAll(async () => {
  file = await writeConfig(dir.path, YAML);
  server = await startMockServer({ config: file, port: 0, clock: '2026-05-31T23:00:00Z' });
});
afterAll(() => server?.close());
const order = (body: string, key = KEY) =>
  mock(server.url, 'POST', '/mock/orders', { headers: { 'x-api-key': key, 'content-type': 'application/json' }, body });

describe('in process and over HTTP: the same answers', () => {
  test('requests, count, wait, usage, endpoints, scenarios, clock', async () => {
    const client = connectMockServer(server.url);
    await server.reset();
    await order('{"n":1}');
    await order('{"n":2}');
    const filter = { path: '/mock/orders', limit: 5 };
    expect(await client.requests(filter)).toEqual(await server.requests(filter));
    expect((await server.requests(filter)).map((e) => e.body)).toEqual(['{"n":1}', '{"n":2}']);
    expect(await client.countRequests({ status: 201 })).toBe(await server.countRequests({ status: 201 }));
    expect(await client.waitForRequests(filter, { count: 2 })).toEqual(
      await server.waitForRequests(filter, { count: 2 }),
    );
    expect(await client.usage()).toEqual(await server.usage());
    expect(await client.endpoints()).toEqual(await server.endpoints());
    expect(await client.scenarios.get()).toEqual(await server.scenarios.get());
    const [a, b] = [await client.clock.now(), await server.clock.now()];
    expect(Math.abs(Date.parse(a) - Date.parse(b))).toBeLessThan(5000);
    for (const call of [() => server.scenarios.set('nope', 'x'), () => client.scenarios.set('nope', 'x')]) {
      await expect(call()).rejects.toMatchObject({
        name: 'ControlError',
        status: 404,
        code: 'not_found',
        message: 'no scenario named "nope" in the config',
      });
    }
    for (const call of [
      () => server.waitForRequests({ path: '/mock/none' }, { timeout: 50 }),
      () => client.waitForRequests({ path: '/mock/none' }, { timeout: 50 }),
    ]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WaitTimeoutError);
      expect(err).toMatchObject({ status: 408, code: 'timeout', requests: [] });
    }
  });

  test('waitForRequests resolves when the request arrives, with its body', async () => {
    const client = connectMockServer(server.url);
    const since = (await server.requests({ limit: 1 }))[0]?.id ?? 0;
    const local = server.waitForRequests({ method: 'POST', since });
    const remote = client.waitForRequests({ method: 'POST', since }, { timeout: '20s' });
    await order('{"webhook":true}');
    const [l, r] = await Promise.all([local, remote]);
    expect(l).toEqual(r);
    expect(JSON.parse(l[0]!.body)).toEqual({ webhook: true });
  });

  test('reset zeroes the parts asked for; absent means all', async () => {
    await order('{}');
    const partial = await server.reset({
      usage: true,
      journal: false,
      rateLimit: false,
      sequences: false,
      scenarios: false,
      clock: false,
      stubs: false,
    });
    expect(partial.reset).toEqual(['usage']);
    expect(partial.usage.requests).toBe(0);
    expect(partial.usage.rateLimit?.remaining).toBeLessThan(100);
    expect(await server.countRequests()).toBeGreaterThan(0);
    const all = await connectMockServer(server.url).reset();
    expect(all).toEqual({
      reset: ['journal', 'usage', 'rateLimit', 'sequences', 'scenarios', 'clock', 'stubs'],
      usage: {
        month: all.usage.month,
        requests: 0,
        quota: 1000,
        remaining: 1000,
        rateLimit: { limit: 100, remaining: 100, resetSeconds: 0 },
      },
      scenarios: {},
    });
    expect(await server.countRequests()).toBe(0);
  });
});

describe('rotate-key', () => {
  test('over HTTP: 200 with the new key once served; the old key is refused and journaled as previous', async () => {
    const answer = await admin(server.url, 'POST', 'rotate-key', { key: 'mk_rotatedOverHttp0000000000000001' });
    expect(answer).toMatchObject({ status: 200, body: { key: 'mk_rotatedOverHttp0000000000000001' } });
    expect(await readFile(file, 'utf8')).toBe(YAML.replace(KEY, 'mk_rotatedOverHttp0000000000000001'));
    expect((await order('{}')).status).toBe(401);
    expect((await order('{}', 'mk_rotatedOverHttp0000000000000001')).status).toBe(201);
    const [old, fresh] = (await server.requests({ limit: 2 })).map((e) => e.credential);
    expect(old).toEqual({ via: 'x-api-key', key: 'previous' });
    expect(fresh).toEqual({ via: 'x-api-key', key: 'current' });
    const all = JSON.stringify(await server.requests());
    expect(all).not.toContain(KEY);
    expect(all).not.toContain('mk_rotatedOverHttp');
  });

  test('in process: a generated key, served when rotateKey resolves', async () => {
    const key = await server.rotateKey();
    expect(key).toMatch(/^mk_/);
    expect((await order('{}', key)).status).toBe(201);
  });

  test('a config given as an object has no file: 409', async () => {
    const objectServer = await startMockServer({ config: { apiKey: KEY, endpoints: [] }, port: 0 });
    try {
      await expect(objectServer.rotateKey()).rejects.toMatchObject({ status: 409, code: 'conflict' });
      expect((await admin(objectServer.url, 'POST', 'rotate-key')).status).toBe(409);
      await expect(objectServer.clock.advance('1s')).rejects.toBeInstanceOf(ControlError);
    } finally {
      await objectServer.close();
    }
  });
});

describe('events', () => {
  test('reload and usage events', async () => {
    const res = await request(`${server.url}/__mockapi/events`);
    let text = '';
    const seen = (event: string) =>
      new Promise<any>((done) => {
        const check = () => {
          const match = new RegExp(`event: ${event}\\ndata: (.*)\\n\\n`).exec(text);
          if (match) done(JSON.parse(match[1]!));
        };
        res.body.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          check();
        });
        check();
      });
    const usage = seen('usage');
    await server.reset({ journal: false });
    expect(await usage).toMatchObject({ requests: 0, quota: 1000 });
    const reload = seen('reload');
    await server.rotateKey();
    expect(await reload).toMatchObject({ endpoints: 1 });
    expect(text).not.toContain(KEY);
    res.body.destroy();
  });

  test('close() ends open event streams at once (a stream never finishes by itself)', async () => {
    const other = await startMockServer({ config: { apiKey: KEY, endpoints: [] }, port: 0 });
    const res = await request(`${other.url}/__mockapi/events`);
    expect(res.statusCode).toBe(200);
    await other.close();
    expect(await res.body.text()).toBe(': mockapi events\n\n');
  });
});
