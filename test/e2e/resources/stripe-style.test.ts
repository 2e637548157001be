// The stripe style without HTTP: form bodies read and typed, nested merge, lists and cursors,
// errors in Stripe's shape, actions with `when`, the lifecycle on a fake clock and its events.
import { describe, expect, test } from 'vitest';
import { testEngine } from './helpers.js';

const CONFIG = {
  seed: 7,
  webhooks: { targets: { app: { url: 'http://127.0.0.1:9/hooks' } } },
  resources: {
    customers: {
      style: 'stripe',
      path: '/v1/customers',
      fields: { object: 'customer', created: '${now.unix}', email: null, balance: 0, delinquent: false, metadata: {} },
      seed: [{ id: 'cus_demo', email: 'ada@example.com' }],
    },
    payment_intents: {
      style: 'stripe',
      path: '/v1/payment_intents',
      fields: { object: 'payment_intent', status: 'requires_confirmation', amount: 0, currency: 'usd' },
      actions: {
        confirm: { set: { status: 'processing' }, send: ['payment_intent.processing'] },
        cancel: { set: { status: 'canceled' }, when: { status: { in: ['requires_confirmation', 'processing'] } } },
      },
      lifecycle: [{ from: 'processing', after: '2s', to: 'succeeded', send: ['payment_intent.succeeded'] }],
    },
  },
};

describe('stripe style', () => {
  test('create from a form body: typed by the defaults, nested, ids seeded; retrieve; update metadata; delete', async () => {
    const t = await testEngine(CONFIG);
    const created = await t.call(
      'POST',
      '/v1/customers',
      'email=jenny%40example.com&balance=-500&delinquent=true&metadata[order]=6735&metadata[tier]=gold',
    );
    expect(created?.status).toBe(200);
    expect(created?.headers['content-type']).toBe('application/json; charset=utf-8');
    const id = created?.json.id as string;
    expect(id).toMatch(/^cus_[0-9A-Za-z]{14}$/);
    expect(created?.json).toEqual({
      id,
      object: 'customer',
      created: 1767225600,
      email: 'jenny@example.com',
      balance: -500,
      delinquent: true,
      metadata: { order: '6735', tier: 'gold' },
    });
    expect(created?.body.indexOf('"id"')).toBe(1); // the id first, as Stripe writes it

    const again = await testEngine(CONFIG);
    expect((await again.call('POST', '/v1/customers', 'email=x'))?.json.id).toBe(id); // the same seed, the same ids

    expect((await t.call('GET', `/v1/customers/${id}`))?.body).toBe(created?.body);
    const updated = await t.call('POST', `/v1/customers/${id}`, 'metadata[tier]=&metadata[plan]=pro');
    expect(updated?.json.metadata).toEqual({ order: '6735', plan: 'pro' });
    const cleared = await t.call('POST', `/v1/customers/${id}`, 'metadata=');
    expect(cleared?.json.metadata).toEqual({});

    const deleted = await t.call('DELETE', `/v1/customers/${id}`);
    expect(deleted?.body).toBe(`{"id":"${id}","object":"customer","deleted":true}`);
    const missing = await t.call('GET', `/v1/customers/${id}`);
    expect(missing?.status).toBe(404);
    expect(missing?.body).toBe(
      `{"error":{"code":"resource_missing","message":"No such customer: '${id}'","param":"id","type":"invalid_request_error"}}`,
    );
  });

  test("an update's form values take the type of the field's default, then of the stored value", async () => {
    const t = await testEngine(CONFIG);
    const cleared = await t.call('POST', '/v1/customers/cus_demo', 'balance=&delinquent=');
    expect(cleared?.json).toMatchObject({ balance: null, delinquent: null });
    const set = await t.call('POST', '/v1/customers/cus_demo', 'balance=7&delinquent=true');
    expect(set?.json).toMatchObject({ balance: 7, delinquent: true });
    expect((await t.call('POST', '/v1/customers/cus_demo', 'balance=lots'))?.json.error.message).toBe(
      'Invalid integer: lots',
    );
    // the default (null) gives no type: the stored value does
    await t.call('POST', '/v1/customers/cus_demo', { email: 5, score: 1, metadata: { visits: 2 } });
    const typed = await t.call('POST', '/v1/customers/cus_demo', 'email=6&score=2&metadata[visits]=3');
    expect(typed?.json).toMatchObject({ email: 6, score: 2, metadata: { visits: 3 } });
    // a text default keeps text, whatever is stored
    await t.call('POST', '/v1/customers/cus_demo', { object: 1 });
    expect((await t.call('POST', '/v1/customers/cus_demo', 'object=2'))?.json.object).toBe('2');
  });

  test('an integer default takes only whole decimal numbers; a fractional default decimal numbers', async () => {
    const t = await testEngine({
      resources: {
        customers: { style: 'stripe', path: '/v1/customers', fields: { balance: 0, rate: 0.5 } },
      },
    });
    const refusal = (message: string, param: string) => ({
      status: 400,
      error: { message, param, type: 'invalid_request_error' },
    });
    const post = async (body: string) => {
      const answer = await t.call('POST', '/v1/customers', body);
      return answer?.status === 200 ? answer.json : { status: answer?.status, error: answer?.json.error };
    };
    for (const bad of ['12.5', '0x10', '1e3', '+5', ' 5', 'Infinity', '9007199254740993', '1_000'])
      expect(await post(`balance=${encodeURIComponent(bad)}`)).toEqual(refusal(`Invalid integer: ${bad}`, 'balance'));
    for (const bad of ['0x10', 'Infinity', '-Infinity', '1e3', 'NaN', '.', '1.2.3'])
      expect(await post(`rate=${encodeURIComponent(bad)}`)).toEqual(refusal(`Invalid number: ${bad}`, 'rate'));
    expect(await post('balance=-500&rate=12.25')).toMatchObject({ balance: -500, rate: 12.25 });
    expect(await post('balance=0042&rate=-3')).toMatchObject({ balance: 42, rate: -3 });
    expect(await post('rate=.5')).toMatchObject({ rate: 0.5 });
    expect((await t.call('GET', '/v1/customers?limit=100'))?.json.data).toHaveLength(3);
  });

  test('the seed is there; lists newest first with cursors both ways; filters', async () => {
    const t = await testEngine(CONFIG);
    expect((await t.call('GET', '/v1/customers/cus_demo'))?.json.email).toBe('ada@example.com');
    const ids: string[] = ['cus_demo'];
    for (let i = 0; i < 24; i++)
      ids.push((await t.call('POST', '/v1/customers', `email=c${i}%40example.com&balance=${i}`))?.json.id);
    const first = await t.call('GET', '/v1/customers?limit=10');
    expect(first?.json).toMatchObject({ object: 'list', has_more: true, url: '/v1/customers' });
    expect(first?.json.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(-10).reverse());
    const second = await t.call('GET', `/v1/customers?limit=10&starting_after=${ids[15]}`);
    expect(second?.json.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(5, 15).reverse());
    // created between two page reads: the next page is unchanged
    await t.call('POST', '/v1/customers', 'email=late%40example.com');
    const third = await t.call('GET', `/v1/customers?limit=10&starting_after=${ids[5]}`);
    expect(third?.json.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(0, 5).reverse());
    expect(third?.json.has_more).toBe(false);
    const back = await t.call('GET', `/v1/customers?limit=3&ending_before=${ids[5]}`);
    expect(back?.json.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(6, 9).reverse());
    const rich = await t.call('GET', '/v1/customers?balance[gte]=20&limit=100');
    expect(rich?.json.data.map((c: { balance: number }) => c.balance)).toEqual([23, 22, 21, 20]);
    const one = await t.call('GET', '/v1/customers?email=c3%40example.com');
    expect(one?.json.data).toHaveLength(1);
  });

  test('bad input: limit out of range, an unknown cursor, a malformed body, __proto__ keys, a bad integer', async () => {
    const t = await testEngine(CONFIG);
    const big = await t.call('GET', '/v1/customers?limit=1000000');
    expect(big?.status).toBe(400);
    expect(big?.body).toBe(
      '{"error":{"message":"This value must be less than or equal to 100.","param":"limit","type":"invalid_request_error"}}',
    );
    const cursor = await t.call('GET', '/v1/customers?starting_after=cus_nope');
    expect(cursor?.status).toBe(400);
    expect(cursor?.json.error).toEqual({
      code: 'resource_missing',
      message: "No such customer: 'cus_nope'",
      param: 'starting_after',
      type: 'invalid_request_error',
    });
    const json = await t.call('POST', '/v1/customers', '{"email":', 'application/json');
    expect(json?.status).toBe(400);
    expect(json?.json.error.type).toBe('invalid_request_error');
    const proto = await t.call('POST', '/v1/customers', 'metadata[__proto__][polluted]=1');
    expect(proto?.status).toBe(400);
    expect(proto?.json.error).toEqual({
      message: 'Received unknown parameter: metadata[__proto__][polluted]',
      param: 'metadata[__proto__][polluted]',
      type: 'invalid_request_error',
    });
    const jsonProto = await t.call(
      'POST',
      '/v1/customers',
      '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}',
      'application/json',
    );
    expect(jsonProto?.status).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const integer = await t.call('POST', '/v1/customers', 'balance=lots');
    expect(integer?.json.error).toEqual({
      message: 'Invalid integer: lots',
      param: 'balance',
      type: 'invalid_request_error',
    });
    const index = await t.call('POST', '/v1/customers', 'items[100000][price]=p');
    expect(index?.status).toBe(400);
    expect((await t.call('GET', '/v1/customers?limit=100'))?.json.data).toHaveLength(1); // nothing was created
  });

  test("actions: set and send; when refuses in Stripe's shape; the lifecycle on the clock sends its event", async () => {
    const t = await testEngine(CONFIG);
    const pi = (await t.call('POST', '/v1/payment_intents', 'amount=2000&currency=eur'))?.json;
    expect(pi).toMatchObject({
      object: 'payment_intent',
      status: 'requires_confirmation',
      amount: 2000,
      currency: 'eur',
    });
    const confirmed = await t.call('POST', `/v1/payment_intents/${pi.id}/confirm`, '');
    expect(confirmed?.json.status).toBe('processing');
    expect(confirmed?.notes).toEqual(['webhook payment_intent.processing → app']);
    expect(
      t.events.map((e) => [
        e.event.type,
        e.event.envelope,
        e.event.target,
        (e.event.data as { object: { status: string } }).object.status,
      ]),
    ).toEqual([['payment_intent.processing', 'stripe', 'app', 'processing']]);

    await t.advance(1999);
    expect((await t.call('GET', `/v1/payment_intents/${pi.id}`))?.json.status).toBe('processing');
    await t.advance(1);
    expect(t.events.map((e) => e.event.type)).toEqual(['payment_intent.processing', 'payment_intent.succeeded']);
    expect((t.events[1]?.event.data as { object: { id: string; status: string } }).object).toMatchObject({
      id: pi.id,
      status: 'succeeded',
    });
    expect((await t.call('GET', `/v1/payment_intents/${pi.id}`))?.json.status).toBe('succeeded');

    const cancel = await t.call('POST', `/v1/payment_intents/${pi.id}/cancel`, '');
    expect(cancel?.status).toBe(400);
    expect(cancel?.json.error).toEqual({
      code: 'payment_intent_unexpected_state',
      message:
        'You cannot cancel this payment_intent because it has a status of succeeded. Only a payment_intent with one of the following statuses may be used with cancel: requires_confirmation, processing.',
      type: 'invalid_request_error',
    });
  });

  test('a read after the move is due sees it, even before the timer ran', async () => {
    const t = await testEngine(CONFIG);
    const pi = (await t.call('POST', '/v1/payment_intents', 'amount=5'))?.json;
    await t.call('POST', `/v1/payment_intents/${pi.id}/confirm`, '');
    await t.advance(5000, false);
    const later = await t.call('GET', `/v1/payment_intents/${pi.id}`);
    expect(later?.json.status).toBe('succeeded');
    expect(t.events.map((e) => e.event.type)).toEqual(['payment_intent.processing', 'payment_intent.succeeded']);
    await t.advance(0);
    expect(t.events).toHaveLength(2); // the move the timer would have run is not run twice
  });
});
