// Resources proved by the official stripe SDK against the built CLI (port 0): create, retrieve,
// update metadata, autoPagingEach over 250 (each seen once), delete then resource_missing; one
// PaymentIntent for two calls with one idempotencyKey; one when the connection is reset after the
// create and the SDK retries by itself; confirm → the virtual clock +2 s → succeeded, and a
// payment_intent.succeeded delivery that stripe.webhooks.constructEvent accepts.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServe, stopAll, tempDir, waitFor, writeConfig, type ServeProcess } from '../../helpers/cli.js';
import { admin } from '../../helpers/control.js';

const KEY = 'sk_test_resourcesStripeSdk00000000000001';
const SECRET = 'whsec_resourcesStripeSdkTest';
let server: ServeProcess;
let receiver: Server;
const received: Array<{ body: string; signature: string }> = [];

function config(hooks: number): string {
  return `apiKey: ${KEY}
seed: 42
server:
  basePath: /v1
auth:
  accept: [bearer, basic]
webhooks:
  targets:
    app:
      url: http://127.0.0.1:${hooks}/hooks
      sign: { scheme: stripe, secret: ${SECRET} }
resources:
  customers:
    style: stripe
    path: /customers
    fields: { object: customer, created: "\${now.unix}", email: null, name: null, metadata: {} }
  payment_intents:
    style: stripe
    path: /payment_intents
    fields: { object: payment_intent, created: "\${now.unix}", status: requires_confirmation, amount: 0, currency: usd, metadata: {} }
    actions:
      confirm: { set: { status: processing }, send: [payment_intent.processing] }
      cancel: { set: { status: canceled }, when: { status: { in: [requires_confirmation, processing] } } }
    lifecycle:
      - { from: processing, after: 2s, to: succeeded, send: [payment_intent.succeeded] }
`;
}

const stripeAt = (url: string, options: Partial<Stripe.StripeConfig> = {}): Stripe =>
  new Stripe(KEY, { host: '127.0.0.1', port: Number(new URL(url).port), protocol: 'http', ...options });

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      received.push({ body, signature: String(req.headers['stripe-signature']) });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const dir = await tempDir();
  const file = await writeConfig(dir, config((receiver.address() as AddressInfo).port));
  server = await startServe(['-c', file, '--clock', '2026-01-01T00:00:00Z'], { cwd: dir });
});

afterAll(async () => {
  await stopAll();
  receiver?.close();
});

describe('stripe SDK against resources', () => {
  test('create, retrieve, update metadata, autoPagingEach over 250, delete, then resource_missing', async () => {
    const stripe = stripeAt(server.url);
    const created = await stripe.customers.create({
      email: 'jenny.rosen@example.com',
      name: 'Jenny Rosen',
      metadata: { order: '6735' },
    });
    expect(created).toMatchObject({
      object: 'customer',
      email: 'jenny.rosen@example.com',
      metadata: { order: '6735' },
    });
    expect(created.id).toMatch(/^cus_[0-9A-Za-z]{14}$/);
    expect(created.created).toBe(Date.parse('2026-01-01T00:00:00Z') / 1000);
    expect(await stripe.customers.retrieve(created.id)).toEqual(created);
    const updated = await stripe.customers.update(created.id, { metadata: { order: '', plan: 'pro' } });
    expect(updated.metadata).toEqual({ plan: 'pro' });

    for (let batch = 0; batch < 10; batch++)
      await Promise.all(
        Array.from({ length: 25 }, (_, i) => stripe.customers.create({ email: `c${batch * 25 + i}@example.com` })),
      );
    const seen: string[] = [];
    await stripe.customers.list({ limit: 40 }).autoPagingEach((customer) => {
      seen.push(customer.id);
    });
    expect(seen).toHaveLength(251);
    expect(new Set(seen).size).toBe(251);
    expect(seen.at(-1)).toBe(created.id); // newest first: the first one created comes last

    const deleted = await stripe.customers.del(created.id);
    expect(deleted).toEqual({ id: created.id, object: 'customer', deleted: true });
    const error = await stripe.customers.retrieve(created.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error).toMatchObject({
      code: 'resource_missing',
      statusCode: 404,
      param: 'id',
      message: `No such customer: '${created.id}'`,
    });
  });

  test('two calls with one idempotencyKey make one PaymentIntent; another body with the key is an idempotency error', async () => {
    const stripe = stripeAt(server.url);
    const first = await stripe.paymentIntents.create(
      { amount: 2000, currency: 'usd' },
      { idempotencyKey: 'order-6735' },
    );
    const second = await stripe.paymentIntents.create(
      { amount: 2000, currency: 'usd' },
      { idempotencyKey: 'order-6735' },
    );
    expect(second.id).toBe(first.id);
    expect(first.amount).toBe(2000);
    expect(second.lastResponse.headers['idempotent-replayed']).toBe('true');
    const other = await stripe.paymentIntents
      .create({ amount: 999, currency: 'usd' }, { idempotencyKey: 'order-6735' })
      .catch((e: unknown) => e);
    expect(other).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    const all = await admin(server.url, 'GET', 'resources/payment_intents?amount=2000');
    expect(all.body.objects).toHaveLength(1);
  });

  test('a connection reset after the create: the SDK retries with its own key and gets the same object', async () => {
    // A proxy that lets the first create reach the mock, reads its answer, then resets the client's connection.
    let resets = 0;
    const proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const upstream = request(
          `${server.url}${req.url}`,
          { method: req.method, headers: req.headers },
          (answer: IncomingMessage) => {
            const body: Buffer[] = [];
            answer.on('data', (c: Buffer) => body.push(c));
            answer.on('end', () => {
              if (req.method === 'POST' && req.url === '/v1/payment_intents' && resets++ === 0)
                return void req.socket.resetAndDestroy();
              res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(body));
            });
          },
        );
        upstream.end(Buffer.concat(chunks));
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const stripe = stripeAt(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, { maxNetworkRetries: 2 });
      const intent = await stripe.paymentIntents.create({ amount: 4242, currency: 'eur' });
      expect(resets).toBe(2);
      const made = await admin(server.url, 'GET', 'resources/payment_intents?amount=4242');
      expect(made.body.objects.map((o: { id: string }) => o.id)).toEqual([intent.id]);
      const posts = await admin(server.url, 'GET', 'requests?method=POST&path=/v1/payment_intents');
      const last = posts.body.requests.slice(-2);
      expect(last.map((e: { headers: Record<string, string> }) => e.headers['idempotency-key'])).toEqual([
        last[0].headers['idempotency-key'],
        last[0].headers['idempotency-key'],
      ]);
      expect(last[1].responseHeaders['idempotent-replayed']).toBe('true');
    } finally {
      proxy.close();
    }
  });

  test('confirm, the virtual clock 2 s on: succeeded, and a payment_intent.succeeded delivery constructEvent accepts', async () => {
    const stripe = stripeAt(server.url);
    const intent = await stripe.paymentIntents.create({ amount: 1500, currency: 'usd' });
    const confirmed = await stripe.paymentIntents.confirm(intent.id);
    expect(confirmed.status).toBe('processing');
    expect(
      await stripe.paymentIntents.cancel(intent.id).then(
        () => 'canceled',
        (e: Stripe.errors.StripeError) => e.code,
      ),
    ).toBe('canceled');
    const second = await stripe.paymentIntents.create({ amount: 1600, currency: 'usd' });
    await stripe.paymentIntents.confirm(second.id);
    expect((await admin(server.url, 'POST', 'clock', { advance: '2s' })).status).toBe(200);
    expect((await stripe.paymentIntents.retrieve(second.id)).status).toBe('succeeded');
    const refused = await stripe.paymentIntents.cancel(second.id).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(refused).toMatchObject({ code: 'payment_intent_unexpected_state', statusCode: 400 });
    const delivery = await waitFor(() =>
      received.find((r) => r.body.includes('"payment_intent.succeeded"') && r.body.includes(second.id)),
    );
    const event = stripe.webhooks.constructEvent(delivery.body, delivery.signature, SECRET);
    expect(event.type).toBe('payment_intent.succeeded');
    expect((event.data.object as Stripe.PaymentIntent).id).toBe(second.id);
    expect((event.data.object as Stripe.PaymentIntent).status).toBe('succeeded');
  });

  test('for await over a list, deleting each customer as it comes: every one deleted, none a 400 for its cursor', async () => {
    const stripe = stripeAt(server.url);
    await Promise.all(Array.from({ length: 25 }, (_, i) => stripe.customers.create({ email: `d${i}@example.com` })));
    const total = (await stripe.customers.list({ limit: 100 }).autoPagingToArray({ limit: 10_000 })).length;
    let deleted = 0;
    for await (const customer of stripe.customers.list({ limit: 10 })) {
      await stripe.customers.del(customer.id);
      deleted++;
    }
    expect(deleted).toBe(total);
    expect((await stripe.customers.list({ limit: 100 })).data).toEqual([]);
  });
});
