// A delivery wait that times out says what it waited for and what came instead, as `requests/wait`
// does: the filter, and the closest deliveries seen (the fields that differ), or that none came —
// over HTTP (the real CLI, 408) and in process (`server.webhooks.waitFor` rejects with it).
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startMockServer, type MockServer } from '../../src/index.js';
import { startServe, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin } from '../helpers/control.js';

const KEY = 'mk_webhooksWait00000000000000000001';
const dir = useTempDir('mockapi-webhooks-wait-');
let receiver: Server;
let receiverUrl: string;
let serve: ServeProcess;
let server: MockServer;

const webhooks = (url: string) => ({
  targets: { app: { url: `${url}/hook`, retry: { schedule: 'none' } } },
  events: { ping: { envelope: 'github', data: { zen: 'hi' } } },
});

beforeAll(async () => {
  receiver = createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const file = await writeConfig(dir.path, JSON.stringify({ apiKey: KEY, webhooks: webhooks(receiverUrl) }));
  serve = await startServe(['-c', file, '--no-state']);
  server = await startMockServer({ config: { apiKey: KEY, webhooks: webhooks(receiverUrl) }, port: 0 });
});
afterAll(async () => {
  await serve?.stop();
  await server?.close();
  await new Promise((r) => receiver?.close(r));
});
beforeEach(async () => {
  expect((await admin(serve.url, 'POST', 'reset', {})).status).toBe(200);
  await server.reset();
});

const delivered = async (url: string) => {
  expect((await admin(url, 'POST', 'webhooks/trigger', { event: 'ping', to: 'app' })).status).toBe(201);
  expect((await admin(url, 'GET', 'webhooks/deliveries/wait?status=delivered')).status).toBe(200);
};

describe('a timed-out delivery wait', () => {
  test('with no delivery at all: the filter, and that none came', async () => {
    expect(await admin(serve.url, 'GET', 'webhooks/deliveries/wait?event=zzz&timeout=100')).toMatchObject({
      status: 408,
      body: {
        error: 'timeout',
        message: '0 of 1 delivery matching event=zzz came within 100 ms; no delivery came at all',
        deliveries: [],
      },
    });
  });

  test('names the closest deliveries seen and the fields that differ', async () => {
    await delivered(serve.url);
    expect(
      await admin(serve.url, 'GET', 'webhooks/deliveries/wait?event=zzz&target=app&count=2&timeout=100'),
    ).toMatchObject({
      status: 408,
      body: {
        error: 'timeout',
        message:
          '0 of 2 deliveries matching event=zzz, target=app came within 100 ms; closest deliveries seen: whd_1 ping → app (delivered): event differs',
        deliveries: [],
      },
    });
    // Every delivery seen matches: none came besides them.
    const some = await admin(serve.url, 'GET', 'webhooks/deliveries/wait?event=ping&count=2&timeout=100');
    expect(some.status).toBe(408);
    expect(some.body.message).toBe('1 of 2 deliveries matching event=ping came within 100 ms; no other delivery came');
    expect(some.body.deliveries).toHaveLength(1);
  });

  test('in process, server.webhooks.waitFor rejects with the same message', async () => {
    await expect(server.webhooks.waitFor({ event: 'zzz' }, { timeout: 50 })).rejects.toThrow(
      '0 of 1 delivery matching event=zzz came within 50 ms; no delivery came at all',
    );
    await delivered(server.url);
    await expect(server.webhooks.waitFor({ status: 'failed' }, { timeout: 50 })).rejects.toThrow(
      '0 of 1 delivery matching status=failed came within 50 ms; closest deliveries seen: whd_1 ping → app (delivered): status differs',
    );
  });
});

describe('a filter value no delivery or request can have', () => {
  // The default timeout is 5 s: a refusal well before it was not a wait.
  const refusedAtOnce = async (wait: Promise<unknown>, message: string): Promise<void> => {
    const started = Date.now();
    await expect(wait).rejects.toMatchObject({ status: 400, code: 'bad_request', message });
    expect(Date.now() - started).toBeLessThan(1000);
  };

  test('webhooks.waitFor({ status: "bogus" }) rejects at once, as the HTTP form answers 400', async () => {
    const http = await admin(server.url, 'GET', 'webhooks/deliveries/wait?status=bogus');
    expect(http).toMatchObject({ status: 400, body: { error: 'bad_request' } });
    expect(http.body.message).toBe('status must be one of pending, delivered, failed, got "bogus"');
    await refusedAtOnce(server.webhooks.waitFor({ status: 'bogus' as never }), http.body.message);
  });

  test('waitForRequests({ step: "foo" }) rejects at once, as the HTTP form answers 400', async () => {
    const http = await admin(server.url, 'GET', 'requests/wait?step=foo');
    expect(http).toMatchObject({ status: 400, body: { error: 'bad_request' } });
    expect(http.body.message).toMatch(/^step must be one of auth, .*, got "foo"$/);
    await refusedAtOnce(server.waitForRequests({ step: 'foo' as never }), http.body.message);
    // Read as the query `connectMockServer` sends: `status: '200'` is status=200 there, `'abc'` the same 400.
    await refusedAtOnce(server.waitForRequests({ status: 'abc' as never }), 'status must be a whole number, got "abc"');
  });
});
