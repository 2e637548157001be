// Black-box tests: the built CLI on port 0, driven over real HTTP with undici.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { request } from 'undici';
import { mkdir, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, startServe, stopAll, tempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_testKey0123456789abcdefghijklmnop';
const JSON_TYPE = 'application/json; charset=utf-8';
const basic = (user: string, pass = '') => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

const CONFIG = `
project: blackbox
apiKey: ${KEY}
endpoints:
  - method: GET
    path: /users/:id
    response:
      headers:
        x-request-id: demo
      body: { id: 42, name: Ada }
  - method: GET
    path: /users
    response:
      body: [1, 2]
  - method: POST
    path: /orders
    response:
      status: 201
      bodyFile: fixtures/order.json
  - method: GET
    path: /files/*
    response:
      body: "wild"
  - method: HEAD
    path: /only-head
    response:
      status: 200
  - method: get
    path: /text
    response:
      body: "plain words"
  - method: DELETE
    path: /orders/:id
    response:
      status: 204
  - method: GET
    path: /Case
    response:
      body: upper
  - method: GET
    path: /never
    failRate: 0
    response:
      body: fine
  - method: GET
    path: /always
    failRate: 1
    response:
      body: never
  - method: GET
    path: /half
    failRate: "50%"
    response:
      body: ok
  - method: GET
    path: /slow
    delay: 150ms
    response:
      body: late
`;

let dir: string;
let server: ServeProcess;
let configBytes: Buffer;

beforeAll(async () => {
  dir = await tempDir();
  await mkdir(join(dir, 'fixtures'));
  await writeFile(join(dir, 'fixtures', 'order.json'), '{"id":1001}\n');
  const file = await writeConfig(dir, CONFIG);
  configBytes = readFileSync(file);
  server = await startServe(['-c', file, '--no-state', '--log', 'json', '--seed', '7'], { cwd: dir });
});

afterAll(async () => {
  await stopAll();
  await removeDir(dir);
});

async function get(path: string, headers: Record<string, string> = {}, method = 'GET') {
  const res = await request(`${server.url}${path}`, { method: method as 'GET', headers });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}

describe('auth (SPEC §4)', () => {
  const NO_KEY = '{"error":"Unauthorized","message":"No API key provided"}';
  const BAD_KEY = '{"error":"Unauthorized","message":"Invalid API key"}';
  const cases: Array<[string, Record<string, string>, number, string?]> = [
    ['no credential', {}, 401, NO_KEY],
    ['X-API-Key', { 'x-api-key': KEY }, 200],
    ['X-API-Key wrong', { 'x-api-key': 'mk_nope' }, 401, BAD_KEY],
    ['X-API-Key empty falls back to Authorization', { 'x-api-key': '', authorization: `Bearer ${KEY}` }, 200],
    ['X-API-Key empty alone', { 'x-api-key': '' }, 401, NO_KEY],
    ['X-API-Key wins over Authorization', { 'x-api-key': 'mk_wrong', authorization: `Bearer ${KEY}` }, 401, BAD_KEY],
    ['X-API-Key right beats wrong Authorization', { 'x-api-key': KEY, authorization: 'Bearer nope' }, 200],
    ['Bearer', { authorization: `Bearer ${KEY}` }, 200],
    ['bearer lower case', { authorization: `bearer ${KEY}` }, 200],
    ['BEARER upper case', { authorization: `BEARER ${KEY}` }, 200],
    ['Bearer wrong', { authorization: 'Bearer mk_wrong' }, 401, BAD_KEY],
    ['Bearer empty token', { authorization: 'Bearer ' }, 401, NO_KEY],
    ['Bearer scheme only', { authorization: 'Bearer' }, 401, NO_KEY],
    ['empty Authorization', { authorization: '' }, 401, NO_KEY],
    ['unknown scheme', { authorization: `Token ${KEY}` }, 401, NO_KEY],
    ['Basic key as username', { authorization: basic(KEY) }, 200],
    ['Basic password ignored', { authorization: basic(KEY, 'whatever') }, 200],
    ['basic lower case', { authorization: basic(KEY).replace('Basic', 'basic') }, 200],
    ['Basic wrong username', { authorization: basic('mk_wrong') }, 401, BAD_KEY],
    ['Basic key as password only', { authorization: basic('user', KEY) }, 401, BAD_KEY],
    ['Basic invalid base64', { authorization: 'Basic !!!not-base64!!!' }, 401, BAD_KEY],
    ['Basic empty', { authorization: 'Basic ' }, 401, NO_KEY],
  ];
  test.each(cases)('%s', async (_name, headers, status, body) => {
    const res = await get('/mock/users/42', headers);
    expect(res.status).toBe(status);
    if (body !== undefined) {
      expect(res.text).toBe(body);
      expect(res.headers['content-type']).toBe(JSON_TYPE);
    } else {
      expect(JSON.parse(res.text)).toEqual({ id: 42, name: 'Ada' });
    }
  });
});

describe('matching and responses (SPEC §3)', () => {
  const auth = { 'x-api-key': KEY };
  const notFound = (method: string, path: string) =>
    JSON.stringify({ error: 'not_found', message: `No endpoint configured for ${method} ${path}` });

  test.each([
    ['params', '/mock/users/7', 200, '{"id":42,"name":"Ada"}'],
    ['query string ignored', '/mock/users/7?x=1&y=2', 200, '{"id":42,"name":"Ada"}'],
    ['trailing slash ignored', '/mock/users/', 200, '[1,2]'],
    ['wildcard one segment', '/mock/files/a', 200, 'wild'],
    ['wildcard deep', '/mock/files/a/b/c.txt', 200, 'wild'],
    ['case-sensitive miss', '/mock/case', 404, notFound('GET', '/case')],
    ['case-sensitive hit', '/mock/Case', 200, 'upper'],
    ['unknown path', '/mock/nope?x=1', 404, notFound('GET', '/nope')],
    ['method config any case', '/mock/text', 200, 'plain words'],
  ])('%s: GET %s → %i', async (_name, path, status, body) => {
    const res = await get(path, auth);
    expect(res.status).toBe(status);
    expect(res.text).toBe(body);
  });

  test('JSON body, configured headers and content type', async () => {
    const res = await get('/mock/users/1', auth);
    expect(res.headers['content-type']).toBe(JSON_TYPE);
    expect(res.headers['x-request-id']).toBe('demo');
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(res.text)));
  });

  test('string body is text/plain', async () => {
    const res = await get('/mock/text', auth);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
  });

  test('bodyFile relative to the config, content type from the extension', async () => {
    const res = await get('/mock/orders', auth, 'POST');
    expect(res.status).toBe(201);
    expect(res.text).toBe('{"id":1001}\n');
    expect(res.headers['content-type']).toBe(JSON_TYPE);
  });

  test('wrong method is a 404 naming it', async () => {
    const res = await get('/mock/users/1', auth, 'PUT');
    expect(res.status).toBe(404);
    expect(res.text).toBe(notFound('PUT', '/users/1'));
  });

  test('HEAD falls back to GET: headers without a body', async () => {
    const res = await get('/mock/users/1', auth, 'HEAD');
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength('{"id":42,"name":"Ada"}')));
  });

  test('a HEAD endpoint answers HEAD, and GET of it is a 404', async () => {
    expect((await get('/mock/only-head', auth, 'HEAD')).status).toBe(200);
    expect((await get('/mock/only-head', auth)).status).toBe(404);
  });

  test('204 has no body', async () => {
    const res = await get('/mock/orders/1', auth, 'DELETE');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
  });

  test('auth comes before matching: an unknown path without a key is 401', async () => {
    const res = await get('/mock/nope');
    expect(res.status).toBe(401);
  });

  test('delay is waited', async () => {
    const started = performance.now();
    const res = await get('/mock/slow', auth);
    expect(res.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });
});

describe('fail rate (SPEC §5.6)', () => {
  const auth = { 'x-api-key': KEY };
  const FAILURE = '{"error":"simulated_failure","message":"Random failure triggered"}';

  test('failRate 0 never fails, 1 always fails', async () => {
    for (let i = 0; i < 20; i++) {
      expect((await get('/mock/never', auth)).status).toBe(200);
      const res = await get('/mock/always', auth);
      expect(res.status).toBe(500);
      expect(res.text).toBe(FAILURE);
      expect(res.headers['content-type']).toBe(JSON_TYPE);
    }
  });

  test('seeded: the same seed gives the same sequence, whatever other endpoints get', async () => {
    const sequence = async (s: ServeProcess, noise: boolean) => {
      const out: number[] = [];
      for (let i = 0; i < 30; i++) {
        if (noise && i % 3 === 0) await request(`${s.mock}/never`, { headers: auth }).then((r) => r.body.dump());
        const res = await request(`${s.mock}/half`, { headers: auth });
        await res.body.dump();
        out.push(res.statusCode);
      }
      return out;
    };
    const file = join(dir, 'mockapi.yaml');
    const a = await startServe(['-c', file, '--no-state', '--log', 'off', '--seed', '1234'], { cwd: dir });
    const b = await startServe(['-c', file, '--no-state', '--log', 'off', '--seed', '1234'], { cwd: dir });
    const c = await startServe(['-c', file, '--no-state', '--log', 'off', '--seed', '999'], { cwd: dir });
    const [sa, sb, sc] = [await sequence(a, false), await sequence(b, true), await sequence(c, false)];
    expect(sa).toEqual(sb);
    expect(sa).toContain(500);
    expect(sa).toContain(200);
    expect(sc).not.toEqual(sa);
    await Promise.all([a.stop(), b.stop(), c.stop()]);
  });
});

describe('CORS (SPEC §3)', () => {
  test('preflight is 204 without a key, allowing the method and headers', async () => {
    const res = await get(
      '/mock/users/1',
      { origin: 'http://localhost:5173', 'access-control-request-method': 'PUT' },
      'OPTIONS',
    );
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(res.headers['access-control-allow-methods']).toBe('PUT');
    expect(res.headers['access-control-allow-headers']).toBe('X-API-Key, Authorization, Content-Type');
  });

  test('every answer carries Access-Control-Allow-Origin: the Origin, or *', async () => {
    expect(
      (await get('/mock/users/1', { 'x-api-key': KEY, origin: 'http://a.test' })).headers[
        'access-control-allow-origin'
      ],
    ).toBe('http://a.test');
    expect((await get('/mock/users/1')).headers['access-control-allow-origin']).toBe('*');
    expect((await get('/__mockapi/health')).headers['access-control-allow-origin']).toBe('*');
  });

  test('OPTIONS without Access-Control-Request-Method is an ordinary request', async () => {
    expect((await get('/mock/users/1', {}, 'OPTIONS')).status).toBe(401);
  });
});

describe('outside /mock', () => {
  test('health: 200 without auth, revision = sha256 of the config bytes', async () => {
    const res = await get('/__mockapi/health');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(JSON_TYPE);
    const revision = createHash('sha256').update(configBytes).digest('hex');
    expect(res.text).toBe(`{"status":"ok","revision":"${revision}","endpoints":12}`);
  });

  test('anything else is the 404 body with the full path', async () => {
    const res = await get('/users/1?x=1');
    expect(res.status).toBe(404);
    expect(res.text).toBe('{"error":"not_found","message":"No endpoint configured for GET /users/1"}');
  });

  test('/mockery is not under /mock', async () => {
    const res = await get('/mockery');
    expect(res.text).toBe('{"error":"not_found","message":"No endpoint configured for GET /mockery"}');
  });
});

describe('requests that cannot be read', () => {
  test('malformed percent-encoding is a 400 JSON', async () => {
    const res = await get('/mock/users/%E0%A4%A', { 'x-api-key': KEY });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe(JSON_TYPE);
    expect(JSON.parse(res.text)).toMatchObject({ error: 'bad_request' });
    expect(Object.keys(JSON.parse(res.text))).toEqual(['error', 'message']);
  });

  test('a body over the limit is a 413 JSON', async () => {
    const res = await request(`${server.mock}/orders`, {
      method: 'POST',
      headers: { 'x-api-key': KEY },
      body: Buffer.alloc(1024 * 1024 + 1),
    });
    expect(res.statusCode).toBe(413);
    const body = (await res.body.json()) as Record<string, string>;
    expect(body.error).toBe('payload_too_large');
    expect(Object.keys(body)).toEqual(['error', 'message']);
  });

  test('a body under the limit is read and the endpoint answers', async () => {
    const res = await request(`${server.mock}/orders`, {
      method: 'POST',
      headers: { 'x-api-key': KEY },
      body: '{"a":1}',
    });
    expect(res.statusCode).toBe(201);
    await res.body.dump();
  });
});

describe('logs (SPEC §5.7)', () => {
  test('json lines: method, path, status, time; never the key; 404 names the closest endpoint', async () => {
    await get('/mock/user/42?apikey=' + KEY, { 'x-api-key': KEY });
    await server.waitForOutput(/"path":"\/mock\/user\/42"/, 'stdout');
    const line = server
      .stdout()
      .split('\n')
      .find((l) => l.includes('"/mock/user/42"'))!;
    const entry = JSON.parse(line);
    expect(entry).toMatchObject({ method: 'GET', path: '/mock/user/42', status: 404 });
    expect(typeof entry.ms).toBe('number');
    expect(entry.note).toContain('did you mean GET /users/:id?');
    expect(server.stdout()).not.toContain(KEY);
    expect(server.stderr()).not.toContain(KEY);
  });
});
