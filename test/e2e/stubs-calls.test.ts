// Run-time stubs and test calls on startMockServer's object and on connectMockServer alike:
// stub() → { id, remove() }, stubs(), setUsage(n), reset({ clock, stubs }); the client's errors.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createServer } from 'node:net';
import { startMockServer, ListenError, type MockServer } from '../../src/mock-server.js';
import { connectMockServer } from '../../src/connect.js';
import { StubInvalidError } from '../../src/stubs/stub-error.js';
import { mock } from '../helpers/control.js';

const KEY = 'mk_stubCalls0000000000000000000001';
let server: MockServer;
beforeAll(async () => {
  server = await startMockServer({
    config: {
      apiKey: KEY,
      limits: { monthlyQuota: 10 },
      endpoints: [{ method: 'GET', path: '/users/:id', response: { body: { from: 'config' } } }],
    },
    port: 0,
    clock: '2026-11-30T12:00:00Z',
  });
});
afterAll(() => server?.close());
const get = (path: string) => mock(server.url, 'GET', `/mock${path}`, { headers: { 'x-api-key': KEY } });

describe.each([
  ['in process', () => server],
  ['over HTTP', () => connectMockServer(server.url)],
] as const)('%s', (_label, target) => {
  test('stub() answers before the config; remove() takes it away; stubs() lists it', async () => {
    const calls = target();
    await calls.reset();
    const handle = await calls.stub(
      { method: 'GET', path: '/users/:id', response: { status: 202, body: { from: 'stub' } } },
      { name: 'mine' },
    );
    expect(handle).toMatchObject({ id: expect.any(String), name: 'mine' });
    expect(await get('/users/1')).toMatchObject({ status: 202, text: '{"from":"stub"}' });
    expect(await calls.stubs()).toEqual([
      {
        id: handle.id,
        name: 'mine',
        endpoint: { method: 'GET', path: '/users/:id', response: { status: 202, body: { from: 'stub' } } },
        times: null,
        remaining: null,
        hits: 1,
      },
    ]);
    await handle.remove();
    await handle.remove(); // already gone: not an error
    expect(await get('/users/1')).toMatchObject({ status: 200, text: '{"from":"config"}' });
    const counted = await calls.stub({ method: 'GET', path: '/once' }, { times: 1 });
    expect((await get('/once')).status).toBe(200);
    expect((await get('/once')).status).toBe(404);
    await counted.remove(); // used up: not an error either
  });

  test('an invalid stub rejects with every issue', async () => {
    const err = await target()
      .stub({ method: 'GET', path: '/x', response: { status: 99 } }, { times: 0 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StubInvalidError);
    expect(err).toMatchObject({
      status: 400,
      code: 'invalid_stub',
      issues: [
        { path: '/times', message: 'times must be a whole number of at least 1, got 0' },
        { path: '/endpoint/response/status', message: 'endpoint.response.status must be between 100 and 599, got 99' },
      ],
    });
  });

  test('setUsage(n) reaches the quota edge; reset({ stubs: false }) keeps stubs, reset() puts the clock back', async () => {
    const calls = target();
    await calls.reset();
    expect(await calls.setUsage(9)).toMatchObject({ requests: 9, quota: 10, remaining: 1 });
    expect((await get('/users/1')).status).toBe(200);
    expect((await get('/users/1')).status).toBe(429);
    await calls.stub({ method: 'GET', path: '/kept', response: { status: 203 } });
    await calls.clock.advance('40d');
    expect(await calls.reset({ stubs: false, clock: false })).toMatchObject({
      reset: ['journal', 'usage', 'rateLimit', 'sequences', 'scenarios'],
    });
    expect((await get('/kept')).status).toBe(203);
    expect((await calls.clock.now()).slice(0, 7)).toBe('2027-01');
    await calls.reset();
    expect((await get('/kept')).status).toBe(404);
    expect((await calls.clock.now()).slice(0, 13)).toBe('2026-11-30T12');
  });
});

describe('errors that say what happened', () => {
  test('connectMockServer to a URL where nothing listens names the URL', async () => {
    const port = await freePort();
    const err = await connectMockServer(`http://127.0.0.1:${port}`)
      .usage()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      name: 'ControlError',
      code: 'unreachable',
      message: `nothing answers at http://127.0.0.1:${port} — is \`mockapi serve\` running?`,
    });
  });

  test('an unknown filter value is 400', async () => {
    await expect(connectMockServer(server.url).requests({ step: 'foo' as never })).rejects.toMatchObject({
      status: 400,
      code: 'bad_request',
    });
  });

  test('a wait that times out names its filter and the closest requests it saw', async () => {
    await server.reset();
    await get('/users/1');
    const err = await server
      .waitForRequests({ method: 'POST', path: '/mock/users/1' }, { timeout: 30 })
      .catch((e: unknown) => e);
    expect((err as Error).message).toMatch(
      /^0 of 1 request matching method=POST, path=\/mock\/users\/1 arrived within 30 ms; closest requests seen: #\d+ GET \/mock\/users\/1 → 200 \(response, GET \/users\/:id\): method differs$/,
    );
  });

  test('ListenError says port: 0 in the programmatic API', async () => {
    const err = await startMockServer({ config: { apiKey: KEY }, port: server.port }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ListenError);
    expect((err as Error).message).toBe(
      `port ${server.port} on 127.0.0.1 is already in use (try port: 0 for any free port)`,
    );
  });
});

/** A port nothing listens on (taken, then let go). */
function freePort(): Promise<number> {
  return new Promise((done) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
  });
}

describe('setUsage where the count is kept', () => {
  test('with a state file: the count set is what the file holds', async () => {
    const { mkdtemp, readFile, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = await mkdtemp(join(tmpdir(), 'mockapi-setusage-'));
    const state = join(dir, 'state.json');
    const s = await startMockServer({ config: { apiKey: KEY, limits: { monthlyQuota: 100 } }, port: 0, state });
    try {
      expect(await s.setUsage(42)).toMatchObject({ requests: 42, remaining: 58 });
      await s.close();
      expect(JSON.parse(await readFile(state, 'utf8')).usage.requests).toBe(42);
    } finally {
      await s.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('with a shared store (Redis): every server sharing it sees the count', async () => {
    const { startRedis } = await import('../helpers/redis.js');
    const redis = await startRedis();
    const config = { apiKey: KEY, project: 'set-usage', limits: { monthlyQuota: 10 } };
    const [one, two] = await Promise.all([
      startMockServer({ config, port: 0, store: redis.url }),
      startMockServer({ config, port: 0, store: redis.url }),
    ]);
    try {
      expect(await one.setUsage(9)).toMatchObject({ requests: 9, quota: 10, remaining: 1 });
      expect((await two.usage()).requests).toBe(9);
      const ask = (s: MockServer) => mock(s.url, 'GET', '/mock/x', { headers: { 'x-api-key': KEY } });
      expect((await ask(two)).status).toBe(404); // counted: the 10th
      expect((await ask(one)).status).toBe(429);
    } finally {
      await Promise.all([one.close(), two.close()]);
      await redis.stop();
    }
  });
});
