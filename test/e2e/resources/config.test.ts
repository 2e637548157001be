// Config errors of `resources:` and `idempotency:`, each at its file, line and column, and the
// defaults a valid config gets.
import { describe, expect, test } from 'vitest';
import { formatIssue, parseConfig } from '../../../src/config/load.js';

async function problems(text: string): Promise<string[]> {
  const result = await parseConfig(text, 'mockapi.yaml');
  if (result.ok) return [];
  return result.issues.map(formatIssue);
}

const HEAD = 'apiKey: mk_resourcesConfig00000000000000001\n';

describe('resources config', () => {
  test('an unknown style, two collections on one path, a bad duration, bad when, bad send, bad expressions', async () => {
    const text = `${HEAD}webhooks:
  targets:
    app: { url: "http://127.0.0.1:9/hooks" }
resources:
  customers:
    style: strpe
    path: /v1/customers
  clients:
    style: stripe
    path: /v1/customers/
    id: "cl_\${randomId(14"
  payment_intents:
    style: stripe
    path: /v1/payment_intents
    fields: { created: "\${now.unixx}", customer: "\${resources.customer}" }
    actions:
      confirm: { set: { status: processing }, send: [{ event: payment_intent.processing, to: ap }] }
      cancel: { when: { status: { inn: [a] } } }
    lifecycle:
      - { from: processing, after: 2 s, to: succeeded }
      - { from: processing, after: 2s, to: { succeeded: 0, failed: 0 } }
      - { from: processing, after: 30d, to: processing }
  orders:
    style: rest
    path: /v1/orders/:id.json
    seed:
      - { id: o_1 }
      - { id: o_1 }
idempotency: { ttl: 0 }
`;
    expect(await problems(text)).toEqual([
      'mockapi.yaml:7:12: resources.customers.style must be one of stripe, github, openai, rest, got "strpe"; did you mean `stripe`?',
      'mockapi.yaml:11:11: resources.clients.path is the path of resources.customers too (parameter names do not make paths different); give each collection a path of its own',
      'mockapi.yaml:12:26: resources.clients.id unexpected end of text; expected `,`',
      'mockapi.yaml:16:31: resources.payment_intents.fields.created `now` has unix, ms and iso, not `unixx`',
      'mockapi.yaml:16:63: resources.payment_intents.fields.customer unknown resource `customer`; did you mean `resources.customers`?',
      'mockapi.yaml:18:94: resources.payment_intents.actions.confirm.send[0].to names no entry of webhooks.targets: did you mean "app"?',
      'mockapi.yaml:19:35: resources.payment_intents.actions.cancel.when.status.inn is not a known matcher; did you mean `in`?',
      'mockapi.yaml:21:36: resources.payment_intents.lifecycle[0].after must be a duration: whole milliseconds (120) or a number with a unit (250ms, 2s, 1m, 1h), got "2 s"',
      'mockapi.yaml:22:44: resources.payment_intents.lifecycle[1].to needs at least one weight above 0',
      'mockapi.yaml:23:36: resources.payment_intents.lifecycle[2].after must be a duration: whole milliseconds (120) or a number with a unit (250ms, 2s, 1m, 1h), got "30d"',
      'mockapi.yaml:23:45: resources.payment_intents.lifecycle[2].to is the status it moves from ("processing"); a move must change the status',
      'mockapi.yaml:26:11: resources.orders.path takes parameters only as whole segments (`/repos/:owner/:repo/issues`), got "/v1/orders/:id.json"',
      'mockapi.yaml:29:15: resources.orders.seed[1].id repeats the id of seed[0] ("o_1"); ids are unique in a collection',
      'mockapi.yaml:30:21: idempotency.ttl must be longer than 0, got 0',
    ]);
  });

  test("send to a target without any webhook target, and a path that is another collection's items; an event for every target is fine without any", async () => {
    const text = `${HEAD}resources:
  repos:
    style: github
    path: /repos
  issues:
    style: github
    path: /repos/:repo
    actions:
      close: { set: { state: closed }, send: [issues.closed, { event: issues.closed, to: app }] }
`;
    expect(await problems(text)).toEqual([
      'mockapi.yaml:8:11: resources.issues.path is where the objects of resources.repos are (/repos/:id); give the collection another path',
      'mockapi.yaml:10:90: resources.issues.actions.close.send[1].to names a target, but webhooks.targets has none; add it there',
    ]);
  });

  test('defaults: idempotency on with resources, off without them or with false', async () => {
    const withResources = await parseConfig(
      `${HEAD}resources:\n  customers: { style: stripe, path: /v1/customers }\n`,
      'mockapi.yaml',
    );
    expect(withResources.ok && withResources.config.idempotency).toEqual({
      header: 'idempotency-key',
      ttlMs: 86_400_000,
    });
    expect(withResources.ok && withResources.config.resources?.collections[0]).toMatchObject({
      name: 'customers',
      style: 'stripe',
      path: '/v1/customers',
      fields: {},
      seed: [],
      actions: [],
      lifecycle: [],
    });
    const off = await parseConfig(
      `${HEAD}resources:\n  customers: { style: stripe, path: /v1/customers }\nidempotency: false\n`,
      'mockapi.yaml',
    );
    expect(off.ok && off.config.idempotency).toBeUndefined();
    const none = await parseConfig(HEAD, 'mockapi.yaml');
    expect(none.ok && none.config.idempotency).toBeUndefined();
    const on = await parseConfig(`${HEAD}idempotency: true\n`, 'mockapi.yaml');
    expect(on.ok && on.config.idempotency).toEqual({ header: 'idempotency-key', ttlMs: 86_400_000 });
    const own = await parseConfig(`${HEAD}idempotency: { header: X-Request-Key, ttl: 1h }\n`, 'mockapi.yaml');
    expect(own.ok && own.config.idempotency).toEqual({ header: 'x-request-key', ttlMs: 3_600_000 });
  });
});
