// SPEC §7 through a real `mockapi serve` (port 0): matchers, nesting, sequences, seeded picks,
// expressions, fake data, $repeat and scenarios. Config errors are in dynamic-config.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { stopAll } from '../helpers/cli.js';
import { KEY, serveDynamic, type DynamicServer } from '../helpers/dynamic.js';

const CONFIG = `apiKey: ${KEY}
seed: 7
scenarios:
  order: { initial: none }
endpoints:
  - method: GET
    path: /users/:id
    responses:
      - name: missing
        when: { params.id: "404" }
        status: 404
        body: { error: not_found }
      - name: flaky-7
        when: { params.id: "7" }
        sequence:
          - { times: 2, status: 503, headers: { retry-after: "1" } }
          - body: { id: 7, name: Ada }
      - name: found
        body:
          id: \${int(params.id)}
          greeting: Hello \${query.name ?? "you"}
          idText: \${params.id}
  - method: POST
    path: /match
    responses:
      - { name: in, when: { query.kind: { in: [a, b] } }, body: in }
      - { name: matches, when: { headers.X-Tenant: { matches: "/^acme-\\\\d+$/i" } }, body: matches }
      - { name: exists, when: { cookies.session: { exists: true } }, body: exists }
      - { name: gt, when: { query.n: { gt: 10 } }, body: gt }
      - { name: lte, when: { body.total: { lte: 5 } }, body: lte }
      - { name: contains, when: { body.note: { contains: urgent } }, body: contains }
      - { name: includes, when: { body: { includes: { items: [{ sku: X1 }] } } }, body: includes }
      - { name: not, when: { query.mode: { not: { in: [slow, off] } } }, body: not }
      - { name: request, when: { request: { gte: 1000 } }, body: late }
  - method: GET
    path: /loop
    loop: true
    sequence:
      - { body: a }
      - { times: 2, body: b }
  - method: GET
    path: /flaky
    failRate: 0.5
    sequence:
      - { body: first }
      - { body: second }
  - method: GET
    path: /pick
    pick:
      - { weight: 3, body: heads }
      - { weight: 1, body: tails }
      - { weight: 0, body: never }
  - method: GET
    path: /fake/:id
    seedBy: \${params.id}
    response:
      body:
        id: \${uuid()}
        name: \${fake.person.fullName()}
        n: \${randomInt(1, 1000000)}
  - method: GET
    path: /fake-n
    response:
      body: { name: "\${fake.person.fullName()}", id: "\${uuid()}" }
  - method: GET
    path: /list
    response:
      status: "\${int(query.status) ?? 200}"
      headers: { x-count: "\${query.count}" }
      body:
        items: { $repeat: "\${query.count}", $item: { index: "\${index}", label: "item \${index}" } }
  - method: POST
    path: /echo
    response:
      status: 201
      body: { amount: "\${body.amount}", text: "amount \${body.amount}", literal: "$\${body}" }
  - method: POST
    path: /orders
    response:
      status: 201
      setState: { order: created }
      body: { was: "\${state.order}" }
  - method: GET
    path: /orders/current
    responses:
      - { when: { state.order: created }, body: { status: created } }
      - { when: { state.order: none }, status: 404, body: { error: no_order } }
`;

let server: DynamicServer;
beforeAll(async () => {
  server = await serveDynamic(CONFIG, ['--no-watch']);
});
afterAll(stopAll);

describe('responses with when', () => {
  test('the first item whose when holds answers; nesting a sequence under a when', async () => {
    expect(await server.call('/users/404')).toMatchObject({ status: 404, text: '{"error":"not_found"}' });
    const seven = [
      await server.call('/users/7'),
      await server.call('/users/7'),
      await server.call('/users/7'),
      await server.call('/users/7'),
    ];
    expect(seven.map((r) => r.status)).toEqual([503, 503, 200, 200]);
    expect(seven[0]?.headers.get('retry-after')).toBe('1');
    expect(seven[3]?.text).toBe('{"id":7,"name":"Ada"}');
  });

  test('typed when alone, interpolated inside text; missing values read as nothing', async () => {
    expect((await server.call('/users/42?name=Bo')).text).toBe('{"id":42,"greeting":"Hello Bo","idText":"42"}');
    expect((await server.call('/users/43')).text).toBe('{"id":43,"greeting":"Hello you","idText":"43"}');
  });

  test.each([
    ['?kind=b', {}, undefined, 'in'],
    ['', { 'x-tenant': 'ACME-42' }, undefined, 'matches'],
    ['', { cookie: 'a=1; session=xyz' }, undefined, 'exists'],
    ['?n=11', {}, undefined, 'gt'],
    ['', { 'content-type': 'application/json' }, { total: 5 }, 'lte'],
    ['', { 'content-type': 'application/json' }, { note: 'this is urgent' }, 'contains'],
    ['', { 'content-type': 'application/json' }, { items: [{ sku: 'X0' }, { sku: 'X1', qty: 2 }] }, 'includes'],
    ['?mode=fast', {}, undefined, 'not'],
  ])('matcher %s %j %j → %s', async (query, headers, body, expected) => {
    const res = await server.call(`/match${query}`, {
      method: 'POST',
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(res).toMatchObject({ status: 200, text: expected });
  });

  test('a responses list whose items all have when answers an unmatched request with the 404 of an unknown endpoint', async () => {
    const res = await server.call('/match?n=3&mode=off', { method: 'POST' });
    expect(res.status).toBe(404);
    expect(res.text).toBe('{"error":"not_found","message":"No endpoint configured for POST /match"}');
    await server.proc.waitForOutput(
      /POST \/mock\/match 404 .*no answer matched; closest: in \(query\.kind did not match\)/,
      'stdout',
    );
  });
});

describe('sequence', () => {
  test('loop: true starts over; times repeats a step', async () => {
    const bodies: string[] = [];
    for (let i = 0; i < 7; i++) bodies.push((await server.call('/loop')).text);
    expect(bodies).toEqual(['a', 'b', 'b', 'a', 'b', 'b', 'a']);
  });

  test('simulated failures do not advance a sequence', async () => {
    const answered: string[] = [];
    let failures = 0;
    for (let i = 0; i < 40; i++) {
      const res = await server.call('/flaky');
      if (res.status === 500) failures++;
      else answered.push(res.text);
    }
    expect(failures).toBeGreaterThan(0);
    expect(answered[0]).toBe('first');
    expect(answered.slice(1).every((t) => t === 'second')).toBe(true);
  });
});

describe('pick, seeded', () => {
  test('rough weights over 1,000 requests, weight 0 never, and the same draws for the same seed', async () => {
    const draws: string[] = [];
    for (let i = 0; i < 1000; i++) draws.push((await server.call('/pick')).text);
    const heads = draws.filter((d) => d === 'heads').length;
    expect(draws).not.toContain('never');
    expect(heads).toBeGreaterThan(690);
    expect(heads).toBeLessThan(810);
    const again = await serveDynamic(CONFIG, ['--no-watch']);
    const replay: string[] = [];
    for (let i = 0; i < 50; i++) replay.push((await again.call('/pick')).text);
    expect(replay).toEqual(draws.slice(0, 50));
  }, 60_000);
});

describe('random values and fake data', () => {
  test('seedBy: the same id gets the same values in any order and across runs; another id others', async () => {
    const a1 = (await server.call('/fake/1')).json() as Record<string, unknown>;
    const b = (await server.call('/fake/2')).json() as Record<string, unknown>;
    const a2 = (await server.call('/fake/1')).json() as Record<string, unknown>;
    expect(a2).toEqual(a1);
    expect(b.name).not.toEqual(a1.name);
    expect(a1.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const other = await serveDynamic(CONFIG, ['--no-watch']);
    expect((await other.call('/fake/1')).json()).toEqual(a1);
    const n1 = await other.call('/fake-n');
    const n2 = await other.call('/fake-n');
    expect(n1.text).not.toBe(n2.text); // without seedBy: per request number
    const third = await serveDynamic(CONFIG, ['--no-watch']);
    expect((await third.call('/fake-n')).text).toBe(n1.text); // the first request of a run, same seed
  }, 30_000);
});

describe('status, headers and $repeat', () => {
  test('status from an expression, header values interpolated, $repeat with index', async () => {
    const res = await server.call('/list?count=2&status=207');
    expect(res.status).toBe(207);
    expect(res.headers.get('x-count')).toBe('2');
    expect(res.text).toBe('{"items":[{"index":0,"label":"item 0"},{"index":1,"label":"item 1"}]}');
    expect((await server.call('/list')).text).toBe('{"items":[]}');
  });

  test('body values are read from a JSON body; $${ writes a literal ${', async () => {
    const res = await server.call('/echo', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"amount":12.5}',
    });
    expect(res).toMatchObject({ status: 201, text: '{"amount":12.5,"text":"amount 12.5","literal":"${body}"}' });
  });
});

describe('scenarios', () => {
  test('setState moves a scenario when the leaf answers; when and ${state.x} read it', async () => {
    expect(await server.call('/orders/current')).toMatchObject({ status: 404, text: '{"error":"no_order"}' });
    expect(await server.call('/orders', { method: 'POST' })).toMatchObject({ status: 201, text: '{"was":"none"}' });
    expect(await server.call('/orders/current')).toMatchObject({ status: 200, text: '{"status":"created"}' });
  });
});

describe('examples/dynamic', () => {
  test('the users API, job poller and order scenario answer as the example says', async () => {
    const { readFile } = await import('node:fs/promises');
    const { ROOT } = await import('../helpers/cli.js');
    const yaml = (await readFile(`${ROOT}/examples/dynamic/mockapi.yaml`, 'utf8'))
      .replace(/^apiKey: .*$/m, `apiKey: ${KEY}`)
      .replace('failRate: "10%"', 'failRate: 0');
    const example = await serveDynamic(yaml, ['--no-watch']);
    expect(await example.call('/users/404')).toMatchObject({
      status: 404,
      text: '{"error":"not_found","message":"No user 404"}',
    });
    expect((await example.call('/users/abc')).status).toBe(400);
    const user = (await example.call('/users/12')).json() as { id: number; name: string };
    expect(user.id).toBe(12);
    expect((await example.call('/users/12')).json()).toEqual(user);
    const page2 = (await example.call('/users?page=2')).json() as { page: number; items: unknown[]; next: string };
    expect([page2.page, page2.items.length, page2.next]).toEqual([2, 10, '/mock/users?page=3']);
    expect((await example.call('/users?page=4')).text).toBe('{"page":4,"items":[],"next":null}');
    const polls = [];
    for (let i = 0; i < 3; i++) polls.push((await example.call('/jobs/9')).status);
    expect(polls).toEqual([202, 202, 200]);
    expect((await example.call('/orders/ord_1')).status).toBe(404);
    expect((await example.call('/orders/ord_1/pay', { method: 'POST' })).status).toBe(409);
    await example.call('/orders', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"total":30}',
    });
    expect((await example.call('/orders/ord_1/pay', { method: 'POST' })).text).toBe('{"id":"ord_1","status":"paid"}');
    expect((await example.call('/orders/ord_1')).text).toBe('{"id":"ord_1","status":"paid"}');
    const payment = await example.call('/payments', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"amount":10}',
    });
    expect([201, 402]).toContain(payment.status);
  });
});
