// Run-time stubs are validated against the config's OpenAPI description like the config's endpoints:
// a stub naming an operation (`openapi:`), or on an operation's route, reports violations
// (X-Mockapi-Violations, the journal) or enforces them (the validation answer in place of the
// stub's); a stub naming an operation the description lacks is refused as invalid.
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT, startServe, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin, mock } from '../helpers/control.js';

const KEY = 'mk_validateStubs000000000000000001';
const CONFIG = `apiKey: ${KEY}
openapi:
  spec: ./charges-3.0.yaml
endpoints:
  - method: GET
    path: /v1/other
    response: { body: { ok: true } }
`;
const dir = useTempDir('mockapi-validate-stubs-');
let serve: ServeProcess;
const auth = { 'x-api-key': KEY };
const addStub = (body: unknown) => admin(serve.url, 'POST', 'stubs', body);
const postCharge = (body: unknown) =>
  mock(serve.url, 'POST', '/mock/v1/charges', {
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

beforeAll(async () => {
  await copyFile(join(ROOT, 'test', 'fixtures', 'validate', 'charges-3.0.yaml'), join(dir.path, 'charges-3.0.yaml'));
  const file = await writeConfig(dir.path, CONFIG);
  serve = await startServe(['-c', file, '--no-state', '--log', 'off']);
});
afterAll(() => serve?.stop());
beforeEach(async () => {
  expect((await admin(serve.url, 'POST', 'reset', {})).status).toBe(200);
});

test('report: a stub naming an operation answers as stubbed, with the violations count and the journal entry', async () => {
  const added = await addStub({
    name: 'charge',
    endpoint: {
      method: 'POST',
      path: '/v1/charges',
      openapi: 'POST /charges',
      response: { status: 201, body: { id: 'ch_stub' } },
    },
  });
  expect(added.status).toBe(201);

  const bad = await postCharge({ amount: '5', currency: 'usd' });
  expect(bad).toMatchObject({ status: 201, text: '{"id":"ch_stub"}' });
  expect(bad.headers['x-mockapi-violations']).toBe('1');
  const good = await postCharge({ amount: 5, currency: 'usd' });
  expect(good.status).toBe(201);
  expect(good.headers['x-mockapi-violations']).toBeUndefined();

  const journal = await admin(serve.url, 'GET', 'requests?violations=true');
  const { requests } = journal.body as {
    requests: Array<{ endpoint: string; violations: Array<{ in: string; pointer: string; keyword: string }> }>;
  };
  expect(requests).toHaveLength(1);
  expect(requests[0]).toMatchObject({
    endpoint: 'stub charge: POST /v1/charges',
    violations: [{ in: 'body', pointer: '/amount', keyword: 'type' }],
  });
});

test("enforce: a stub on an operation's route gets the operation's own 400 example in place of its answer", async () => {
  const added = await addStub({
    endpoint: { method: 'GET', path: '/v1/charges/:id', validate: 'enforce', response: { body: { id: 'ch_stub' } } },
  });
  expect(added.status).toBe(201);
  const bad = await mock(serve.url, 'GET', '/mock/v1/charges/NOT-A-CHARGE', { headers: auth });
  expect(bad.status).toBe(400);
  expect(JSON.parse(bad.text)).toEqual({ error: { type: 'invalid_request_error', message: 'No such charge' } });
  expect(await mock(serve.url, 'GET', '/mock/v1/charges/ch_1', { headers: auth })).toMatchObject({
    status: 200,
    text: '{"id":"ch_stub"}',
  });
  // A stub the description does not describe is not validated.
  expect(
    (
      await addStub({
        endpoint: { method: 'GET', path: '/v1/elsewhere', validate: 'enforce', response: { body: { ok: 1 } } },
      })
    ).status,
  ).toBe(201);
  const other = await mock(serve.url, 'GET', '/mock/v1/elsewhere?limit=x', { headers: auth });
  expect(other.status).toBe(200);
  expect(other.headers['x-mockapi-violations']).toBeUndefined();
});

test('a stub naming an operation the description lacks is refused, like such a config endpoint', async () => {
  const refused = await addStub({
    endpoint: { method: 'POST', path: '/v1/refunds', openapi: 'POST /refunds', response: { status: 201 } },
  });
  expect(refused).toMatchObject({
    status: 400,
    body: {
      error: 'invalid_stub',
      issues: [
        {
          path: '/endpoint/openapi',
          message: 'endpoint.openapi names an operation that charges-3.0.yaml does not have: POST /refunds',
        },
      ],
    },
  });
  expect((await admin(serve.url, 'GET', 'stubs')).body).toEqual({ stubs: [] });
});
