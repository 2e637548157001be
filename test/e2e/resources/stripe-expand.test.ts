// Stripe's `expand[]`: on create, retrieve, update and actions, in the body or the query, one name
// or several, an id replaced by the object it names — and, over HTTP, the answer kept under an
// idempotency key is the expanded one.
import { request } from 'undici';
import { afterAll, describe, expect, test } from 'vitest';
import { startServe, stopAll, tempDir, writeConfig } from '../../helpers/cli.js';
import { testEngine } from './helpers.js';

afterAll(stopAll);

const CONFIG = {
  seed: 7,
  resources: {
    customers: {
      style: 'stripe',
      path: '/v1/customers',
      fields: { object: 'customer', email: null },
      seed: [{ id: 'cus_demo', email: 'ada@example.com' }],
    },
    payment_methods: {
      style: 'stripe',
      path: '/v1/payment_methods',
      fields: { object: 'payment_method', type: 'card' },
      seed: [{ id: 'pm_demo' }],
    },
    payment_intents: {
      style: 'stripe',
      path: '/v1/payment_intents',
      fields: { object: 'payment_intent', status: 'requires_confirmation', amount: 0, customer: null },
      actions: { confirm: { set: { status: 'processing' } } },
      seed: [{ id: 'pi_demo', customer: 'cus_demo', payment_method: 'pm_demo' }],
    },
  },
};

const CUSTOMER = { id: 'cus_demo', object: 'customer', email: 'ada@example.com' };
const METHOD = { id: 'pm_demo', object: 'payment_method', type: 'card' };

describe('stripe expand', () => {
  test('an update expands what it names (body or query), and stores the id', async () => {
    const t = await testEngine(CONFIG);
    const updated = await t.call('POST', '/v1/payment_intents/pi_demo', 'amount=500&expand[]=customer');
    expect(updated?.status).toBe(200);
    expect(updated?.json).toMatchObject({ id: 'pi_demo', amount: 500, customer: CUSTOMER, payment_method: 'pm_demo' });
    const byQuery = await t.call('POST', '/v1/payment_intents/pi_demo?expand[]=payment_method', 'amount=600');
    expect(byQuery?.json).toMatchObject({ amount: 600, customer: 'cus_demo', payment_method: METHOD });
    const json = await t.call('POST', '/v1/payment_intents/pi_demo', { amount: 700, expand: ['customer'] });
    expect(json?.json).toMatchObject({ amount: 700, customer: CUSTOMER });
    // the stored object keeps the ids
    expect((await t.call('GET', '/v1/payment_intents/pi_demo'))?.json).toMatchObject({
      amount: 700,
      customer: 'cus_demo',
      payment_method: 'pm_demo',
    });
  });

  test('an action expands what it names', async () => {
    const t = await testEngine(CONFIG);
    const confirmed = await t.call('POST', '/v1/payment_intents/pi_demo/confirm', 'expand[]=customer');
    expect(confirmed?.status).toBe(200);
    expect(confirmed?.json).toMatchObject({ status: 'processing', customer: CUSTOMER, payment_method: 'pm_demo' });
    expect((await t.call('GET', '/v1/payment_intents/pi_demo'))?.json.customer).toBe('cus_demo');
  });

  test('several names expand each (expand[]=a&expand[]=b, in the query or the body)', async () => {
    const t = await testEngine(CONFIG);
    const retrieved = await t.call('GET', '/v1/payment_intents/pi_demo?expand[]=customer&expand[]=payment_method');
    expect(retrieved?.json).toMatchObject({ customer: CUSTOMER, payment_method: METHOD });
    const updated = await t.call('POST', '/v1/payment_intents/pi_demo', 'expand[]=customer&expand[]=payment_method');
    expect(updated?.json).toMatchObject({ customer: CUSTOMER, payment_method: METHOD });
    const created = await t.call(
      'POST',
      '/v1/payment_intents',
      'customer=cus_demo&payment_method=pm_demo&expand[0]=customer&expand[1]=payment_method',
    );
    expect(created?.json).toMatchObject({ customer: CUSTOMER, payment_method: METHOD });
  });

  test('over HTTP: the answer kept under an idempotency key is the expanded one', async () => {
    const dir = await tempDir();
    const key = 'sk_test_resourcesExpand00000000000001';
    const file = await writeConfig(
      dir,
      `apiKey: ${key}
server: { basePath: /v1 }
auth: { accept: [bearer] }
resources:
  customers:
    style: stripe
    path: /customers
    fields: { object: customer, email: null }
    seed: [{ id: cus_demo, email: ada@example.com }]
  payment_intents:
    style: stripe
    path: /payment_intents
    fields: { object: payment_intent, status: requires_confirmation, amount: 0 }
    actions: { confirm: { set: { status: processing } } }
    seed: [{ id: pi_demo, customer: cus_demo }]
`,
    );
    const server = await startServe(['-c', file], { cwd: dir });
    const post = async (path: string, body: string, idem: string) => {
      const res = await request(`${server.url}/v1${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/x-www-form-urlencoded',
          'idempotency-key': idem,
        },
        body,
      });
      return { status: res.statusCode, replayed: res.headers['idempotent-replayed'], body: await res.body.text() };
    };
    for (const [path, body] of [
      ['/payment_intents/pi_demo', 'amount=900&expand[]=customer'],
      ['/payment_intents/pi_demo/confirm', 'expand[]=customer'],
    ] as const) {
      const first = await post(path, body, `k-${path}`);
      expect(first.status).toBe(200);
      expect(JSON.parse(first.body).customer).toEqual(CUSTOMER);
      const again = await post(path, body, `k-${path}`);
      expect(again).toEqual({ ...first, replayed: 'true' });
    }
  });
});
