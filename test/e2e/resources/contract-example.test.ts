// The resources example of the contract, as it is written there (with an apiKey, which every config
// needs): it starts, and it behaves as its comments say — a seeded customer, an action that sends an
// event to every webhook target (there are none: it goes nowhere), a `when` that refuses with 400,
// and a lifecycle that moves on the virtual clock.
import { afterAll, describe, expect, test } from 'vitest';
import { runCli, startServe, stopAll, useTempDir, writeConfig } from '../../helpers/cli.js';

afterAll(stopAll);
const dir = useTempDir('mockapi-contract-resources-');
const KEY = 'sk_test_contract0000000000000001';

const EXAMPLE = `apiKey: ${KEY}
resources:
  customers:
    style: stripe                 # stripe | github | openai | rest: methods, list shape, errors
    path: /v1/customers           # collection; items at /v1/customers/:id
    id: "cus_\${randomId(14)}"     # default: <first 3 letters of the name>_<14 base62>, seeded
    fields:                       # defaults of a created object; request fields override them
      object: customer
      created: "\${now.unix}"
      email: null
      metadata: {}
    seed:                         # present after start and after reset (part \`resources\`)
      - { id: cus_demo, email: ada@example.com }
  payment_intents:
    style: stripe
    path: /v1/payment_intents
    fields: { object: payment_intent, status: requires_confirmation, amount: 0, currency: usd }
    actions:                      # POST <item>/<action>
      confirm: { set: { status: processing }, send: [payment_intent.processing] }
      cancel: { set: { status: canceled }, when: { status: { in: [requires_confirmation, processing] } } }
    lifecycle:                    # moves on the server clock (real or virtual)
      - { from: processing, after: 2s, to: succeeded, send: [payment_intent.succeeded] }
idempotency: { header: Idempotency-Key, ttl: 24h }   # stripe's semantics; \`false\` turns it off
`;

describe("the contract's resources example", () => {
  test('validates, serves, and its actions, when and lifecycle work without any webhook target', async () => {
    const file = await writeConfig(dir.path, EXAMPLE);
    const checked = await runCli(['validate', '-c', file], { cwd: dir.path });
    expect({ code: checked.code, stderr: checked.stderr }).toEqual({ code: 0, stderr: '' });
    const proc = await startServe(['-c', file, '--no-state', '--no-watch', '--clock', '2026-06-01T00:00:00Z'], {
      cwd: dir.path,
    });
    const call = async (method: string, path: string, body?: string) => {
      const res = await fetch(`${proc.mock}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${KEY}`,
          ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
        },
        ...(body === undefined ? {} : { body }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    expect((await call('GET', '/v1/customers/cus_demo')).body).toMatchObject({
      id: 'cus_demo',
      email: 'ada@example.com',
    });
    const intent = await call('POST', '/v1/payment_intents', 'amount=2000');
    expect(intent.body).toMatchObject({ object: 'payment_intent', status: 'requires_confirmation', amount: 2000 });
    const id = intent.body.id as string;
    const confirmed = await call('POST', `/v1/payment_intents/${id}/confirm`);
    expect([confirmed.status, confirmed.body.status]).toEqual([200, 'processing']);
    const clock = await fetch(`${proc.url}/__mockapi/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ advance: '3s' }),
    });
    expect(clock.status).toBe(200);
    expect((await call('GET', `/v1/payment_intents/${id}`)).body.status).toBe('succeeded');
    const cancel = await call('POST', `/v1/payment_intents/${id}/cancel`);
    expect(cancel.status).toBe(400);
    expect(cancel.body).toMatchObject({
      error: { type: 'invalid_request_error', code: 'payment_intent_unexpected_state' },
    });
    await proc.stop();
  });
});
