// Issue 12, items 11, 13, 14 and 15, black-box against the built CLI on port 0: header fields past
// Node's default 1,000 still take part in auth, a trailing `*` also matches the empty rest, a long
// `:param` matches, CORS preflights allow the headers a browser asks for (with an exact Vary), and
// every 401 carries a WWW-Authenticate challenge.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { request } from 'undici';
import { removeDir, startServe, stopAll, tempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { sendRaw } from '../fixtures/hardening/raw-http.js';
import { CHALLENGE, EXPOSED, INVALID_KEY, JSON_TYPE, NO_KEY, notFound } from '../helpers/spec-answers.js';

const KEY = 'mk_httpContractKey0123456789abcdef';
const ORIGIN = 'http://localhost:5173';

const CONFIG = `project: http-contract
apiKey: ${KEY}
limits:
  rateLimit: { requests: 100000, window: 1m }
endpoints:
  - { method: GET, path: /users/:id, response: { body: user } }
  - { method: GET, path: /files/*, response: { body: files } }
  - { method: GET, path: /docs/*, response: { body: docs-any } }
  - { method: GET, path: /docs, response: { body: docs-index } }
  - { method: GET, path: /orgs/:org/*, response: { body: org-any } }
  - { method: POST, path: /orders, response: { status: 201, body: created } }
`;

let dir: string;
let server: ServeProcess;
let port: number;

beforeAll(async () => {
  dir = await tempDir('mockapi-http-contract-');
  const file = await writeConfig(dir, CONFIG);
  server = await startServe(['-c', file, '--no-state', '--no-watch', '--log', 'off']);
  port = Number(new URL(server.url).port);
});

afterAll(async () => {
  await stopAll();
  await removeDir(dir);
});

async function get(path: string, headers: Record<string, string> = {}, method = 'GET') {
  const res = await request(`${server.url}${path}`, { method, headers, reset: true });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** `count` small filler fields (`x0:v`, `x1:v` …, 7 or 8 bytes each), sent before the fields under test. */
const filler = (count: number) => Array.from({ length: count }, (_, i) => `x${i.toString(36)}:v\r\n`).join('');
const rawGet = (path: string, fields: string) =>
  `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${fields}\r\n`;

async function rawAnswer(data: string) {
  const result = await sendRaw(port, data);
  const first = result.responses[0];
  expect(first, result.raw.slice(0, 200)).toBeDefined();
  return { status: first!.status, body: first!.body, headers: first!.headers };
}

describe('item 11: every header field takes part in auth, however many were sent', () => {
  // Host and Connection come first, so 998 fillers put the next field at position 1,001.
  test('X-API-Key as the 1,001st field is seen: 200', async () => {
    expect(await rawAnswer(rawGet('/mock/users/1', `${filler(998)}x-api-key: ${KEY}\r\n`))).toMatchObject({
      status: 200,
      body: 'user',
    });
  });

  test('a wrong X-API-Key as the 1,001st field is "Invalid API key", not "No API key provided"', async () => {
    expect(await rawAnswer(rawGet('/mock/users/1', `${filler(998)}x-api-key: mk_wrong\r\n`))).toMatchObject({
      status: 401,
      body: INVALID_KEY,
    });
  });

  test('Bearer as the 2,000th field is seen: 200', async () => {
    expect(await rawAnswer(rawGet('/mock/users/1', `${filler(1997)}authorization: Bearer ${KEY}\r\n`))).toMatchObject({
      status: 200,
      body: 'user',
    });
  });

  test('a second Authorization past the 1,000th field still makes the request invalid', async () => {
    const fields = `authorization: Bearer ${KEY}\r\n${filler(1200)}authorization: Bearer mk_wrong\r\n`;
    expect(await rawAnswer(rawGet('/mock/users/1', fields))).toMatchObject({ status: 401, body: INVALID_KEY });
  });

  test('the 16 KiB header limit still applies to many small fields: 431', async () => {
    const answer = await rawAnswer(rawGet('/mock/users/1', `${filler(6000)}x-api-key: ${KEY}\r\n`));
    expect(answer.status).toBe(431);
    expect(answer.headers['content-type']).toBe(JSON_TYPE);
  });
});

describe('item 13: wildcards match the empty rest; long params match', () => {
  test.each([
    ['/mock/files', 'files'],
    ['/mock/files/', 'files'],
    ['/mock/files/a', 'files'],
    ['/mock/files/a/b', 'files'],
    ['/mock/files?x=1', 'files'],
    // an endpoint with exactly the path before the `*` answers it
    ['/mock/docs', 'docs-index'],
    ['/mock/docs/', 'docs-index'],
    ['/mock/docs/a/b', 'docs-any'],
    ['/mock/orgs/acme', 'org-any'],
    ['/mock/orgs/acme/', 'org-any'],
    ['/mock/orgs/acme/repos/1', 'org-any'],
  ])('GET %s → 200 %s', async (path, body) => {
    const res = await get(path, { 'x-api-key': KEY });
    expect([res.status, res.text]).toEqual([200, body]);
  });

  test.each([
    ['/mock/filesx', '/filesx'],
    ['/mock/fil', '/fil'],
    ['/mock/orgs', '/orgs'],
  ])('GET %s is still a 404', async (path, rest) => {
    const res = await get(path, { 'x-api-key': KEY });
    expect([res.status, res.text]).toEqual([404, notFound('GET', rest)]);
  });

  test('HEAD /mock/files falls back to the GET wildcard', async () => {
    const res = await get('/mock/files', { 'x-api-key': KEY }, 'HEAD');
    expect(res.status).toBe(200);
  });

  test.each([9 * 1024, 15 * 1024])('a %d-character :param matches its endpoint, asked twice', async (length) => {
    const path = `/mock/users/${'p'.repeat(length)}`;
    for (let i = 0; i < 2; i++) {
      const res = await get(path, { 'x-api-key': KEY });
      expect([res.status, res.text]).toEqual([200, 'user']);
    }
  });

  test('a 9 KiB percent-encoded :param (3 bytes an escape, 3 KiB decoded) matches too', async () => {
    const res = await get(`/mock/users/${'%C3%A9'.repeat(1536)}`, { 'x-api-key': KEY });
    expect([res.status, res.text]).toEqual([200, 'user']);
  });
});

describe('item 14: CORS preflights allow what the browser asks for, with an exact Vary', () => {
  const ASKED = 'traceparent, idempotency-key, x-request-id';

  /** `varyLines`: the values of every Vary header line the answer has, as sent. */
  async function preflight(fields: string) {
    const result = await sendRaw(
      port,
      `OPTIONS /mock/orders HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${fields}\r\n`,
    );
    const varyLines = result.raw
      .split('\r\n')
      .filter((line) => /^vary:/i.test(line))
      .map((line) => line.slice(5).trim());
    const first = result.responses[0]!;
    return { status: first.status, headers: first.headers, body: first.body, varyLines };
  }

  test('the requested headers are allowed and Vary names Origin, the method and the headers', async () => {
    const res = await preflight(
      `Origin: ${ORIGIN}\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: ${ASKED}\r\n`,
    );
    expect(res.status).toBe(204);
    expect(res.body).toBe('');
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(res.headers['access-control-allow-methods']).toBe('POST');
    expect(res.headers['access-control-allow-headers']).toBe(ASKED);
    expect(res.varyLines).toEqual(['Origin, Access-Control-Request-Method, Access-Control-Request-Headers']);
  });

  test("a browser's own form (lower case, no spaces) is allowed as sent", async () => {
    const res = await preflight(
      `Origin: ${ORIGIN}\r\nAccess-Control-Request-Method: PUT\r\nAccess-Control-Request-Headers: content-type,idempotency-key,x-api-key\r\n`,
    );
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-headers']).toBe('content-type,idempotency-key,x-api-key');
  });

  test('without an Origin: `*`, and Vary names only what was echoed', async () => {
    const res = await preflight(
      `Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: traceparent\r\n`,
    );
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-headers']).toBe('traceparent');
    expect(res.varyLines).toEqual(['Access-Control-Request-Method, Access-Control-Request-Headers']);
  });

  test('no headers named: the three clients send, and Vary does not name Access-Control-Request-Headers', async () => {
    const res = await preflight(`Origin: ${ORIGIN}\r\nAccess-Control-Request-Method: GET\r\n`);
    expect(res.headers['access-control-allow-headers']).toBe('X-API-Key, Authorization, Content-Type');
    expect(res.varyLines).toEqual(['Origin, Access-Control-Request-Method']);
  });

  test('a value that is not a list of header names is not echoed', async () => {
    const res = await preflight(
      `Origin: ${ORIGIN}\r\nAccess-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: a b, (c)\r\n`,
    );
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-headers']).toBe('X-API-Key, Authorization, Content-Type');
    expect(res.varyLines).toEqual(['Origin, Access-Control-Request-Method']);
  });

  test('the request that follows is answered with the Origin echoed and the limit headers exposed', async () => {
    const res = await get(
      '/mock/orders',
      {
        origin: ORIGIN,
        'x-api-key': KEY,
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        'idempotency-key': 'k1',
        'x-request-id': 'r1',
      },
      'POST',
    );
    expect([res.status, res.text]).toEqual([201, 'created']);
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(res.headers['access-control-expose-headers']).toBe(EXPOSED);
    expect(res.headers.vary).toBe('Origin');
    expect(res.headers['ratelimit-limit']).toBe('100000');
  });
});

describe('item 15: every 401 carries WWW-Authenticate: Bearer realm="mockapi"', () => {
  test.each([
    ['no credential', {}, NO_KEY],
    ['an empty X-API-Key', { 'x-api-key': '' }, NO_KEY],
    ['an unknown scheme', { authorization: `Token ${KEY}` }, NO_KEY],
    ['a wrong X-API-Key', { 'x-api-key': 'mk_wrong' }, INVALID_KEY],
    ['a wrong Bearer token', { authorization: 'Bearer mk_wrong' }, INVALID_KEY],
    ['a Basic value that is not base64', { authorization: 'Basic !!!!' }, INVALID_KEY],
    [
      'Basic with another username',
      { authorization: `Basic ${Buffer.from('mk_wrong:').toString('base64')}` },
      INVALID_KEY,
    ],
  ])('%s', async (_name, headers: Record<string, string>, body) => {
    for (const origin of [undefined, ORIGIN]) {
      const res = await get('/mock/users/1', origin === undefined ? headers : { ...headers, origin });
      expect([res.status, res.text]).toEqual([401, body]);
      expect(res.headers['www-authenticate']).toBe(CHALLENGE);
      expect(res.headers['content-type']).toBe(JSON_TYPE);
      expect(res.headers['content-length']).toBe(String(Buffer.byteLength(body)));
      expect(res.headers['access-control-allow-origin']).toBe(origin ?? '*');
      expect(res.headers['access-control-expose-headers']).toBe(EXPOSED);
      expect(res.headers.vary).toBe(origin === undefined ? undefined : 'Origin');
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
  });

  test('answers other than 401 carry no challenge', async () => {
    expect((await get('/mock/users/1', { 'x-api-key': KEY })).headers['www-authenticate']).toBeUndefined();
    expect((await get('/mock/nope', { 'x-api-key': KEY })).headers['www-authenticate']).toBeUndefined();
  });
});
