// The object of startMockServer and connectMockServer(url) answer alike: a call after close is
// refused as one to a stopped server is (nothing answers at the URL), a wait pending at close ends,
// and a wrong part, filter or option is the admin API's own 400 in process too.
import { describe, expect, test } from 'vitest';
import { readFile } from 'node:fs/promises';
import { startMockServer, type MockServer } from '../../src/mock-server.js';
import { connectMockServer } from '../../src/connect.js';
import { ControlError } from '../../src/control/control-error.js';
import { useTempDir, writeConfig } from '../helpers/cli.js';
import { mock } from '../helpers/control.js';

const KEY = 'mk_parityKey00000000000000000000001';
const YAML = `apiKey: ${KEY}\nscenarios:\n  mode: { initial: ok }\nendpoints:\n  - method: GET\n    path: /a\n    response: { status: 200 }\n`;
const dir = useTempDir('mockapi-parity-');

/** What a call rejects with, as a plain record (class name, status, code, words). */
async function refusal(call: () => Promise<unknown>): Promise<Record<string, unknown>> {
  const err = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the call should reject').toBeInstanceOf(ControlError);
  const { name, status, code, message } = err as ControlError;
  return { name, status, code, message };
}

type Client = Pick<MockServer, 'requests' | 'countRequests' | 'waitForRequests' | 'reset' | 'usage' | 'rotateKey'> &
  Pick<MockServer, 'scenarios' | 'clock' | 'endpoints' | 'stub' | 'stubs' | 'setUsage' | 'clearRequests'>;

describe('after close', () => {
  test('every call rejects at once as one to a stopped server does, and writes nothing', async () => {
    const file = await writeConfig(dir.path, YAML);
    const server = await startMockServer({ config: file, port: 0, clock: '2026-05-31T23:00:00Z' });
    const client = connectMockServer(server.url);
    const pending = server.waitForRequests({ path: '/mock/none' }, { timeout: '30s' });
    const pendingOutcome = pending.then(
      () => 'resolved',
      (e: unknown) => e,
    );
    const pendingDelivery = server.webhooks.waitFor({}, { timeout: '30s' }).then(
      () => 'resolved',
      (e: unknown) => e,
    );
    await server.close();
    // A wait pending at close ends as one over HTTP does: the server is stopping.
    for (const ended of [await pendingOutcome, await pendingDelivery]) {
      expect(ended).toBeInstanceOf(ControlError);
      expect(ended).toMatchObject({ status: 503, code: 'stopping' });
    }
    const before = await readFile(file, 'utf8');
    const calls: ((c: Client) => Promise<unknown>)[] = [
      (c) => c.rotateKey(),
      (c) => c.rotateKey('mk_other0000000000000000000000000001'),
      (c) => c.stub({ method: 'GET', path: '/b', response: { status: 204 } }),
      (c) => c.stubs(),
      (c) => c.usage(),
      (c) => c.setUsage(5),
      (c) => c.reset(),
      (c) => c.requests(),
      (c) => c.countRequests(),
      (c) => c.clearRequests(),
      (c) => c.waitForRequests({}, { timeout: '30s' }),
      (c) => c.scenarios.get(),
      (c) => c.scenarios.set('mode', 'down'),
      (c) => c.clock.now(),
      (c) => c.clock.advance('1h'),
      (c) => c.endpoints(),
    ];
    for (const call of calls) {
      const overHttp = await refusal(() => call(client));
      expect(overHttp).toMatchObject({ code: 'unreachable' });
      expect(overHttp.message).toContain(server.url.replace(/\/mock$/, ''));
      expect(await refusal(() => call(server))).toEqual(overHttp);
    }
    for (const call of [
      () => server.webhooks.targets(),
      () => server.sessions.list(),
      () => server.resourceCollections(),
    ])
      expect(await refusal(call)).toMatchObject({ code: 'unreachable' });
    expect(await readFile(file, 'utf8')).toBe(before);
  });
});

describe('a wrong part, filter or option', () => {
  test('is the admin API 400 in process too, and changes nothing', async () => {
    const file = await writeConfig(dir.path, YAML);
    const server = await startMockServer({ config: file, port: 0, clock: '2026-05-31T23:00:00Z' });
    try {
      const client = connectMockServer(server.url);
      await server.stub({ method: 'GET', path: '/s', response: { status: 204 } });
      const sent = await mock(server.url, 'GET', '/mock/a', { headers: { 'x-api-key': KEY } });
      expect(sent.status).toBe(200);
      await server.waitForRequests({ path: '/mock/a' });
      /* eslint-disable @typescript-eslint/no-explicit-any -- wrong on purpose, as a JS caller may */
      const wrong: ((c: Client) => Promise<unknown>)[] = [
        (c) => c.reset({ stub: false } as any),
        (c) => c.reset({ journal: 'no' } as any),
        (c) => c.requests({ status: 'abc' } as any),
        (c) => c.requests({ since: -1 }),
        (c) => c.requests({ limit: 1.5 }),
        (c) => c.requests({ step: 'nope' } as any),
        (c) => c.requests({ violations: 'yes' } as any),
        (c) => c.countRequests({ status: -200 }),
        (c) => c.waitForRequests({ since: -1 }, { timeout: 50 }),
        (c) => c.waitForRequests({}, { count: 1.5 }),
        (c) => c.waitForRequests({}, { count: -1 }),
        (c) => c.waitForRequests({}, { timeout: 'soon' }),
        (c) => c.waitForRequests({}, { timeout: -5 }),
        (c) => c.rotateKey(5 as any),
        (c) => c.rotateKey(undefined, { name: 7 as any }),
        (c) => c.scenarios.set('mode', 3 as any),
        (c) => c.clock.set(Number.NaN),
        (c) => c.clock.set('tomorrow'),
        (c) => c.clock.advance('soon'),
        (c) => c.setUsage(Number.NaN),
        (c) => c.setUsage(-1),
      ];
      /* eslint-enable @typescript-eslint/no-explicit-any */
      for (const call of wrong) {
        const overHttp = await refusal(() => call(client));
        expect(overHttp.status).toBe(400);
        expect(await refusal(() => call(server)), String(call)).toEqual(overHttp);
      }
      // Nothing was reset: the stub and the journal are still there.
      expect(await server.stubs()).toHaveLength(1);
      expect(await server.countRequests({ path: '/mock/a' })).toBe(1);
      expect(await server.reset({ stub: false } as never).catch((e: unknown) => e)).toMatchObject({
        status: 400,
        message: expect.stringContaining('unknown field "stub"'),
      });
    } finally {
      await server.close();
    }
  });
});

describe('webhooks and sessions', () => {
  test('a wrong filter, wait option, trigger or session id is the admin API 400 in process too', async () => {
    const server = await startMockServer({
      port: 0,
      config: {
        apiKey: KEY,
        webhooks: {
          targets: { app: { url: 'http://127.0.0.1:9/hook', retry: { schedule: 'none' } } },
          events: { ping: { envelope: 'github', data: { zen: 'hi' } } },
        },
      },
    });
    try {
      const client = connectMockServer(server.url);
      /* eslint-disable @typescript-eslint/no-explicit-any -- wrong on purpose, as a JS caller may */
      const wrong: ((c: Pick<MockServer, 'webhooks' | 'sessions'>) => Promise<unknown>)[] = [
        (c) => c.webhooks.deliveries({ status: 'bogus' as any }),
        (c) => c.webhooks.deliveries({ since: -1 }),
        (c) => c.webhooks.deliveries({ limit: 'abc' as any }),
        (c) => c.webhooks.waitFor({}, { count: -1 }),
        (c) => c.webhooks.waitFor({}, { count: 1.5 }),
        (c) => c.webhooks.waitFor({}, { timeout: -5 }),
        (c) => c.webhooks.trigger({} as any),
        (c) => c.webhooks.trigger({ event: 'ping' } as any),
        (c) => c.sessions.create({ id: 5 as any }),
        (c) => c.sessions.create({ id: 'a b' }),
        (c) => c.sessions.delete('nope'),
      ];
      /* eslint-enable @typescript-eslint/no-explicit-any */
      for (const call of wrong) {
        const overHttp = await refusal(() => call(client));
        expect(await refusal(() => call(server)), String(call)).toEqual(overHttp);
      }
      expect(await server.sessions.list()).toEqual([]);
      expect(await server.webhooks.deliveries()).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
