// Bad input, black-box: config mistakes at file:line:column from `mockapi validate`; over HTTP a
// malformed body, limit=1000000, an unknown cursor and `__proto__` keys get the API's own 4xx, the
// server keeps answering and nothing is polluted.
import { request } from 'undici';
import { afterAll, describe, expect, test } from 'vitest';
import { runCli, startServe, stopAll, tempDir, writeConfig } from '../../helpers/cli.js';

afterAll(stopAll);

const KEY = 'sk_test_resourcesBadInput0000000000001';

describe('resources: bad input', () => {
  test('config mistakes: an unknown style, two collections on one path, a bad duration, each at its line and column', async () => {
    const dir = await tempDir();
    const file = await writeConfig(
      dir,
      `apiKey: ${KEY}
resources:
  customers:
    style: strpe
    path: /v1/customers
  clients:
    style: stripe
    path: /v1/customers
    lifecycle:
      - { from: a, after: soon, to: b }
idempotency: { ttl: 1 week }
`,
    );
    const { code, stdout, stderr } = await runCli(['validate', '-c', file]);
    expect(code).toBe(1);
    const lines = (stdout + stderr)
      .trim()
      .split('\n')
      .map((l) => l.replace(`${file}:`, 'F:'));
    expect(lines).toEqual([
      'F:4:12: resources.customers.style must be one of stripe, github, openai, rest, got "strpe"; did you mean `stripe`?',
      'F:8:11: resources.clients.path is the path of resources.customers too (parameter names do not make paths different); give each collection a path of its own',
      'F:10:27: resources.clients.lifecycle[0].after must be a duration: whole milliseconds (120) or a number with a unit (250ms, 2s, 1m, 1h), got "soon"',
      'F:11:21: idempotency.ttl must be a duration: whole milliseconds (120) or a number with a unit (250ms, 2s, 1m, 1h), got "1 week"',
    ]);
  });

  test("over HTTP: the API's own 4xx, never a crash, never an object polluted", async () => {
    const dir = await tempDir();
    const file = await writeConfig(
      dir,
      `apiKey: ${KEY}
server: { basePath: /v1 }
auth: { accept: [bearer] }
resources:
  customers:
    style: stripe
    path: /customers
    fields: { object: customer, balance: 0, metadata: {} }
`,
    );
    const server = await startServe(['-c', file], { cwd: dir });
    const call = async (method: string, path: string, body?: string, type = 'application/x-www-form-urlencoded') => {
      const res = await request(`${server.url}/v1${path}`, {
        method: method as 'GET',
        headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'content-type': type }) },
        body,
      });
      return { status: res.statusCode, body: await res.body.text() };
    };
    expect(await call('GET', '/customers?limit=1000000')).toEqual({
      status: 400,
      body: '{"error":{"message":"This value must be less than or equal to 100.","param":"limit","type":"invalid_request_error"}}',
    });
    expect(await call('GET', '/customers?starting_after=cus_nope')).toEqual({
      status: 400,
      body: '{"error":{"code":"resource_missing","message":"No such customer: \'cus_nope\'","param":"starting_after","type":"invalid_request_error"}}',
    });
    const malformed = await call('POST', '/customers', '{"email": ', 'application/json');
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body).error.type).toBe('invalid_request_error');
    expect((await call('POST', '/customers', 'balance=plenty')).body).toBe(
      '{"error":{"message":"Invalid integer: plenty","param":"balance","type":"invalid_request_error"}}',
    );
    for (const body of ['__proto__[admin]=1', 'metadata[__proto__][admin]=1', 'constructor[prototype][admin]=1'])
      expect((await call('POST', '/customers', body)).status).toBe(400);
    expect((await call('POST', '/customers', '{"__proto__":{"admin":true}}', 'application/json')).status).toBe(400);
    expect((await call('GET', '/customers?__proto__[admin]=1')).status).toBe(200);
    const made = JSON.parse((await call('POST', '/customers', 'metadata[a]=1')).body);
    expect(made).toEqual({ id: made.id, object: 'customer', balance: 0, metadata: { a: '1' } });
    const list = JSON.parse((await call('GET', '/customers')).body);
    expect(list.data).toHaveLength(1); // none of the refused bodies made an object
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect((await request(`${server.url}/__mockapi/health`)).statusCode).toBe(200);
  });

  test('a JSON body nested more than 32 levels deep is a 400, as a form is, never a 500', async () => {
    const dir = await tempDir();
    const file = await writeConfig(
      dir,
      `apiKey: ${KEY}
server: { basePath: /v1 }
auth: { accept: [bearer] }
resources:
  customers:
    style: stripe
    path: /customers
    fields: { object: customer, metadata: {} }
    seed: [{ id: cus_demo }]
`,
    );
    const server = await startServe(['-c', file], { cwd: dir });
    const call = async (path: string, body: string, type = 'application/json') => {
      const res = await request(`${server.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': type },
        body,
      });
      return { status: res.statusCode, body: await res.body.text() };
    };
    // `metadata` and `keys - 1` levels of `a` under it: a value `keys` keys deep, as `metadata[a]…[a]=1` is
    const nested = (keys: number): string => `{"metadata":${'{"a":'.repeat(keys - 1)}1${'}'.repeat(keys)}`;
    const refused = {
      status: 400,
      body: '{"error":{"message":"Parameter metadata is nested more than 32 levels deep","param":"metadata","type":"invalid_request_error"}}',
    };
    for (const path of ['/v1/customers', '/v1/customers/cus_demo']) {
      expect(await call(path, nested(5001))).toEqual(refused);
      expect(await call(path, nested(33))).toEqual(refused);
      expect(await call(path, `metadata${'[a]'.repeat(32)}=1`, 'application/x-www-form-urlencoded')).toEqual(refused);
      expect((await call(path, nested(32))).status).toBe(200);
    }
    const admin = await call('/__mockapi/resources/customers', `{"id":"cus_deep",${nested(5001).slice(1)}`);
    expect(admin.status).toBe(400);
    expect(JSON.parse(admin.body)).toMatchObject({
      error: 'bad_request',
      message: 'Parameter metadata is nested more than 32 levels deep',
    });
    expect((await request(`${server.url}/__mockapi/health`)).statusCode).toBe(200);
  });
});
