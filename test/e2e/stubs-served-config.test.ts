// A run-time stub may name what the served config declares, as the config's own endpoints may:
// its `send` goes to the config's webhook targets with the config's events (delivered to a real
// receiver), and its `cost:` counts on the config's meters (its own cost, not the one of the
// config's endpoint on the same route). Names the config lacks are still the stub's 400.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startServe, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin, mock } from '../helpers/control.js';

const KEY = 'mk_stubsServed0000000000000000000001';
const auth = { 'x-api-key': KEY };
const dir = useTempDir('mockapi-stubs-served-');
let serve: ServeProcess;
let receiver: Server;
const got: { path: string; body: string }[] = [];

const config = (receiverUrl: string) => `apiKey: ${KEY}
limits:
  meters:
    tokens: { limit: 100, window: 1m }
plans:
  pro:
    meters:
      points: { limit: 10, window: 1m }
keys:
  - { name: ci, key: mk_stubsServedPro000000000000000001, plan: pro }
webhooks:
  targets:
    app:
      url: ${receiverUrl}/hooks
      retry: { schedule: none }
  events:
    charge.succeeded:
      envelope: stripe
      data: { object: { id: ch_1, object: charge } }
endpoints:
  - method: POST
    path: /metered
    cost: { tokens: 1 }
    response: { status: 200, body: config }
`;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      got.push({ path: req.url ?? '/', body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const file = await writeConfig(dir.path, config(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}`));
  serve = await startServe(['-c', file, '--no-state']);
});
afterAll(async () => {
  await serve?.stop();
  await new Promise((r) => receiver?.close(r));
});
beforeEach(async () => {
  expect((await admin(serve.url, 'POST', 'reset', {})).status).toBe(200);
  got.length = 0;
});

const addStub = (endpoint: unknown) => admin(serve.url, 'POST', 'stubs', { endpoint });
const meter = async (name: string) =>
  ((await admin(serve.url, 'GET', 'usage')).body as { meters: Record<string, { used: number }> }).meters[name];

describe('a stub names what the served config declares', () => {
  test("its send delivers the config's event to the config's target", async () => {
    const added = await addStub({
      method: 'POST',
      path: '/charges',
      response: { status: 201, send: [{ event: 'charge.succeeded', to: 'app' }] },
    });
    expect(added.status).toBe(201);
    expect((await mock(serve.url, 'POST', '/mock/charges', { headers: auth })).status).toBe(201);
    const delivered = await waitFor(() => got[0]);
    expect(delivered.path).toBe('/hooks');
    expect(JSON.parse(delivered.body)).toMatchObject({
      type: 'charge.succeeded',
      data: { object: { id: 'ch_1', object: 'charge' } },
    });
    // The receiver may have the event before the server notes its answer.
    const deliveries = await waitFor(async () => {
      const { body } = await admin(serve.url, 'GET', 'webhooks/deliveries');
      return body.deliveries[0]?.status === 'delivered' ? body.deliveries : undefined;
    });
    expect(deliveries).toEqual([
      expect.objectContaining({
        event: 'charge.succeeded',
        target: 'app',
        status: 'delivered',
        endpoint: `stub ${added.body.id}: POST /charges`,
      }),
    ]);
  });

  test("its cost counts on the config's meters: its own cost, over the config endpoint's on the route", async () => {
    expect((await addStub({ method: 'POST', path: '/metered', cost: { tokens: 40 } })).status).toBe(201);
    for (const status of [200, 200, 200, 429])
      expect((await mock(serve.url, 'POST', '/mock/metered', { headers: auth })).status).toBe(status);
    expect(await meter('tokens')).toMatchObject({ used: 120, limit: 100 });
  });

  test("a cost on a plan's meter is accepted", async () => {
    expect((await addStub({ method: 'GET', path: '/pts', cost: { points: 4 } })).status).toBe(201);
  });

  test('names the config lacks are still 400 invalid_stub, with the names it has', async () => {
    const bad = await addStub({
      method: 'POST',
      path: '/x',
      cost: { tokenz: 1 },
      response: { send: [{ event: 'charge.succeded', to: 'ap' }] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      error: 'invalid_stub',
      issues: [
        {
          path: '/endpoint/response/send/0/event',
          message:
            'endpoint.response.send[0].event names no entry of webhooks.events: did you mean "charge.succeeded"?',
        },
        {
          path: '/endpoint/response/send/0/to',
          message: 'endpoint.response.send[0].to names no entry of webhooks.targets: did you mean "app"?',
        },
        {
          path: '/endpoint/cost/tokenz',
          message: 'endpoint.cost.tokenz names no meter of limits.meters or of a plan (meters: tokens, points)',
        },
      ],
    });
  });
});
