// Sessions (issue 42) and webhooks, through the real CLI: a delivery belongs to the session whose
// request, object or admin call made it. The delivery log, its wait, replay and the event stream
// of a call naming one session show that session's deliveries and no other's (a test waiting for
// its webhook is never answered by another test's); every delivery still reaches the receiver.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createServer, type Server } from 'node:http';
import { request } from 'undici';
import { startServe, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin, mock } from '../helpers/control.js';

const KEY = 'mk_sessionsHooks000000000000000000001';
const dir = useTempDir('mockapi-sessions-webhooks-');
let serve: ServeProcess;
let receiver: Server;
const received: string[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk));
    req.on('end', () => {
      received.push(body);
      res.end('ok');
    });
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  const port = (receiver.address() as { port: number }).port;
  const config = `apiKey: ${KEY}
webhooks:
  targets:
    app:
      url: http://127.0.0.1:${port}/hook
      sign: { scheme: standard, secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw }
      retry: { schedule: none }
  events:
    order.paid:
      envelope: standard
      data: { order: none }
endpoints:
  - method: POST
    path: /orders
    response:
      body: { ok: true }
      send: [{ event: order.paid, to: app, data: { order: "\${body.order}" } }]
resources:
  intents:
    style: stripe
    path: /v1/intents
    fields: { object: intent, status: processing, note: null }
    lifecycle:
      - { from: processing, after: 2s, to: succeeded, send: [{ event: intent.succeeded, to: app }] }
`;
  serve = await startServe([
    '-c',
    await writeConfig(dir.path, config),
    '--no-state',
    '--clock',
    '2026-08-01T00:00:00Z',
  ]);
});
afterAll(async () => {
  await serve?.stop();
  receiver?.closeAllConnections();
  receiver?.close();
});

const order = (session: string, name: string) =>
  mock(serve.url, 'POST', '/mock/orders', {
    headers: {
      'x-api-key': KEY,
      'content-type': 'application/json',
      ...(session === '' ? {} : { 'x-mockapi-session': session }),
    },
    body: JSON.stringify({ order: name }),
  });
type Delivery = { id: string; event: string; body: string; session?: string };
const deliveries = async (session: string): Promise<Delivery[]> =>
  (await admin(serve.url, 'GET', `webhooks/deliveries${session === '' ? '' : `?session=${session}`}`)).body
    .deliveries as Delivery[];

describe('webhook deliveries belong to a session', () => {
  test("an answer's delivery is listed, waited for and replayed in its session alone", async () => {
    // wh-a's delivery is made first: a wait in wh-b for one delivery of the event must not take it.
    expect((await order('wh-a', 'ord-a')).status).toBe(200);
    expect((await deliveries('wh-a')).map((d) => JSON.parse(d.body).data.order)).toEqual(['ord-a']);
    const waiting = admin(serve.url, 'GET', 'webhooks/deliveries/wait?session=wh-b&event=order.paid&timeout=20s');
    expect((await order('wh-b', 'ord-b')).status).toBe(200);
    const answered = await waiting;
    expect(answered.status).toBe(200);
    expect(answered.body.deliveries.map((d: Delivery) => [JSON.parse(d.body).data.order, d.session])).toEqual([
      ['ord-b', 'wh-b'],
    ]);
    expect(await deliveries('wh-c')).toEqual([]);
    await expect.poll(() => received.filter((b) => b.includes('ord-a') || b.includes('ord-b')).length).toBe(2);
    // The default session's log holds neither; its own request's delivery has no `session`.
    expect(await order('', 'ord-default')).toMatchObject({ status: 200 });
    const own = await deliveries('');
    expect(own.map((d) => [JSON.parse(d.body).data.order, 'session' in d])).toEqual([['ord-default', false]]);
    // Replay: a delivery of another session is no delivery to this caller.
    const [ofA] = await deliveries('wh-a');
    expect((await admin(serve.url, 'POST', `webhooks/deliveries/${ofA!.id}/replay?session=wh-b`)).status).toBe(404);
    expect((await admin(serve.url, 'POST', `webhooks/deliveries/${ofA!.id}/replay`)).status).toBe(404);
    expect(await admin(serve.url, 'POST', `webhooks/deliveries/${ofA!.id}/replay?session=wh-a`)).toMatchObject({
      status: 201,
      body: { session: 'wh-a' },
    });
    expect(await deliveries('wh-a')).toHaveLength(2);
  });

  test("a trigger is its caller's session's; a lifecycle move's delivery is its object's session's", async () => {
    expect(
      await admin(serve.url, 'POST', 'webhooks/trigger?session=wh-t', {
        event: 'order.paid',
        to: 'app',
        data: { order: 'ord-t' },
      }),
    ).toMatchObject({ status: 201, body: { session: 'wh-t' } });
    expect((await deliveries('wh-t')).map((d) => d.event)).toEqual(['order.paid']);
    const made = JSON.parse(
      (
        await mock(serve.url, 'POST', '/mock/v1/intents', {
          headers: {
            'x-api-key': KEY,
            'x-mockapi-session': 'wh-l',
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: 'note=x',
        })
      ).text,
    ) as { id: string };
    await admin(serve.url, 'POST', 'clock?session=wh-l', { advance: '3s' });
    await expect
      .poll(async () => (await deliveries('wh-l')).map((d) => [d.event, JSON.parse(d.body).data.object.id]))
      .toEqual([['intent.succeeded', made.id]]);
    expect((await deliveries('wh-t')).map((d) => d.event)).toEqual(['order.paid']);
    expect(JSON.stringify(await deliveries(''))).not.toMatch(/intent\.succeeded|ord-t/);
  });

  test('a delivery wait keeps its session in use (`open`), and ends with 410 session_dropped when the session is dropped', async () => {
    const waiting = admin(serve.url, 'GET', 'webhooks/deliveries/wait?session=wh-w&event=never&timeout=20s');
    await expect.poll(async () => (await admin(serve.url, 'GET', 'sessions/wh-w')).body.open).toBe(1);
    expect((await admin(serve.url, 'DELETE', 'sessions/wh-w')).status).toBe(200);
    expect(await waiting).toMatchObject({
      status: 410,
      body: { error: 'session_dropped', message: 'the session wh-w was dropped' },
    });
  });

  test("an event stream naming a session carries its deliveries, not another's", async () => {
    // Ended after 15 s whatever comes, so a stream that never carries the delivery fails the test rather than hanging it.
    const res = await request(`${serve.url}/__mockapi/events?session=wh-s`, { signal: AbortSignal.timeout(15_000) });
    const reader = res.body[Symbol.asyncIterator]();
    let text = '';
    const until = async (pattern: RegExp) => {
      while (!pattern.test(text)) text += String((await reader.next()).value);
    };
    await until(/: mockapi events/);
    await order('wh-other', 'ord-elsewhere');
    await order('wh-s', 'ord-mine');
    await until(/event: webhook[^]*ord-mine/);
    expect(text).not.toContain('ord-elsewhere');
    res.body.destroy();
  });
});
