// A resource's answer carries the limit and CORS headers of any answer, each request its own
// values: the header list a resource makes for one answer is extended in place, never shared.
import { request } from 'undici';
import { afterAll, expect, test } from 'vitest';
import { startServe, stopAll, tempDir, writeConfig } from '../../helpers/cli.js';

afterAll(stopAll);

const KEY = 'sk_test_resourcesAnswerHeaders000000001';

test('create, retrieve and list answers carry their own RateLimit values and the CORS headers of their Origin', async () => {
  const dir = await tempDir();
  const file = await writeConfig(
    dir,
    `apiKey: ${KEY}
server: { basePath: / }
limits:
  rateLimit: { requests: 10, window: 1h }
resources:
  customers:
    style: stripe
    path: /v1/customers
    fields: { object: customer, email: null }
`,
  );
  const server = await startServe(['-c', file, '--no-state', '--log', 'off']);
  const send = async (method: string, path: string, headers: Record<string, string>, body?: string) => {
    const res = await request(`${server.url}${path}`, {
      method: method as 'GET',
      headers: {
        'x-api-key': KEY,
        ...headers,
        ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(body === undefined ? {} : { body }),
    });
    const text = await res.body.text();
    const h = res.headers;
    return {
      status: res.statusCode,
      text,
      headers: Object.fromEntries(
        [
          'content-type',
          'content-length',
          'ratelimit-limit',
          'ratelimit-remaining',
          'access-control-allow-origin',
          'access-control-expose-headers',
          'vary',
        ].map((name) => [name, h[name]]),
      ),
    };
  };
  const expose = 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After';
  const created = await send('POST', '/v1/customers', { origin: 'https://app.example' }, 'email=a%40b.c');
  expect(created.status).toBe(200);
  const object = JSON.parse(created.text) as { id: string; email: string };
  expect(object.email).toBe('a@b.c');
  expect(created.headers).toEqual({
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(created.text)),
    'ratelimit-limit': '10',
    'ratelimit-remaining': '9',
    'access-control-allow-origin': 'https://app.example',
    'access-control-expose-headers': expose,
    vary: 'Origin',
  });
  const retrieved = await send('GET', `/v1/customers/${object.id}`, {});
  expect(retrieved.text).toBe(created.text);
  expect(retrieved.headers).toEqual({
    ...created.headers,
    'ratelimit-remaining': '8',
    'access-control-allow-origin': '*',
    vary: undefined,
  });
  const listed = await send('GET', '/v1/customers?limit=1', { origin: 'https://other.example' });
  expect(JSON.parse(listed.text)).toMatchObject({ object: 'list', data: [object], has_more: false });
  expect(listed.headers).toEqual({
    ...created.headers,
    'content-length': String(Buffer.byteLength(listed.text)),
    'ratelimit-remaining': '7',
    'access-control-allow-origin': 'https://other.example',
  });
  const missing = await send('GET', '/v1/customers/cus_none', {});
  expect(missing.status).toBe(404);
  expect(missing.headers).toMatchObject({ 'ratelimit-remaining': '6', 'access-control-allow-origin': '*' });
});
