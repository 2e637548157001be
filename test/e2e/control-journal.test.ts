// SPEC §8: the request journal and its queries, through the real CLI and real HTTP.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { request } from 'undici';
import { startServe, stopAll, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin, mock } from '../helpers/control.js';

const KEY = 'mk_journalKey0000000000000000000001';
const CONFIG = `apiKey: ${KEY}
endpoints:
  - method: POST
    path: /orders
    response: { status: 201, body: { id: 1 } }
  - method: GET
    path: /users/:id
    response: { body: { id: 42 } }
  - method: GET
    path: /flaky
    failRate: 1
`;

const dir = useTempDir('mockapi-journal-');
let server: ServeProcess;
beforeAll(async () => {
  const config = await writeConfig(dir.path, CONFIG);
  server = await startServe(['-c', config, '--no-state', '--no-watch', '--log', 'off']);
});
afterAll(stopAll);

describe('journal entries', () => {
  test('an entry has exactly the fields of SPEC §8, credentials redacted and the key nowhere', async () => {
    await admin(server.url, 'DELETE', 'requests');
    const sent = await mock(server.url, 'POST', `/mock/orders?x=1&x=2&token=${KEY}`, {
      headers: { 'x-api-key': KEY, 'content-type': 'application/json', cookie: 'a=b', 'x-trace': `t-${KEY}` },
      body: JSON.stringify({ item: 'cup', echo: KEY }),
    });
    expect(sent.status).toBe(201);
    const { status, body } = await admin(server.url, 'GET', 'requests');
    expect(status).toBe(200);
    expect(body.requests).toHaveLength(1);
    const entry = body.requests[0];
    expect(Object.keys(entry)).toEqual([
      'id',
      'time',
      'method',
      'path',
      'query',
      'headers',
      'body',
      'bodyTruncated',
      'endpoint',
      'response',
      'status',
      'ms',
      'step',
      'credential',
      'notes',
      'responseHeaders',
      'responseBody',
      'responseBodyTruncated',
    ]);
    expect(entry).toMatchObject({
      method: 'POST',
      path: '/mock/orders',
      query: { x: ['1', '2'], token: '<redacted>' },
      body: JSON.stringify({ item: 'cup', echo: '<redacted>' }),
      bodyTruncated: false,
      endpoint: 'POST /orders',
      response: 'response',
      status: 201,
      step: 'response',
      credential: { via: 'x-api-key', key: 'current' },
      notes: [],
    });
    expect(entry.headers).toMatchObject({
      'x-api-key': '<redacted>',
      cookie: '<redacted>',
      'content-type': 'application/json',
      'x-trace': 't-<redacted>',
    });
    expect(typeof entry.id).toBe('number');
    expect(Date.parse(entry.time)).toBeGreaterThan(0);
    expect(entry.ms).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(body)).not.toContain(KEY);
  });

  test('credential.via for Bearer, Basic and none; a wrong key is unknown', async () => {
    await admin(server.url, 'DELETE', 'requests');
    await mock(server.url, 'GET', '/mock/users/1', { headers: { authorization: `Bearer ${KEY}` } });
    await mock(server.url, 'GET', '/mock/users/1', {
      headers: { authorization: `Basic ${Buffer.from(`${KEY}:`).toString('base64')}` },
    });
    await mock(server.url, 'GET', '/mock/users/1');
    await mock(server.url, 'GET', '/mock/users/1', { headers: { authorization: 'Bearer mk_wrong' } });
    const { body } = await admin(server.url, 'GET', 'requests');
    expect(body.requests.map((e: any) => [e.credential, e.headers.authorization ?? null, e.status, e.step])).toEqual([
      [{ via: 'bearer', key: 'current' }, '<redacted>', 200, 'response'],
      [{ via: 'basic', key: 'current' }, '<redacted>', 200, 'response'],
      [{ via: 'none', key: 'unknown' }, null, 401, 'auth'],
      [{ via: 'bearer', key: 'unknown' }, '<redacted>', 401, 'auth'],
    ]);
    expect(JSON.stringify(body)).not.toContain(KEY);
  });

  test('each step that answers is named', async () => {
    await admin(server.url, 'DELETE', 'requests');
    const auth = { 'x-api-key': KEY };
    await mock(server.url, 'GET', '/mock/nope', { headers: auth });
    await mock(server.url, 'GET', '/mock/flaky', { headers: auth });
    await mock(server.url, 'OPTIONS', '/mock/users/1', {
      headers: { origin: 'http://app.test', 'access-control-request-method': 'GET' },
    });
    await mock(server.url, 'GET', '/mock/%zz', { headers: auth });
    await mock(server.url, 'GET', '/elsewhere');
    const { body } = await admin(server.url, 'GET', 'requests');
    expect(body.requests.map((e: any) => [e.path, e.status, e.step, e.endpoint, e.response])).toEqual([
      ['/mock/nope', 404, 'match', null, null],
      ['/mock/flaky', 500, 'failure', 'GET /flaky', null],
      ['/mock/users/1', 204, 'preflight', null, null],
      ['/mock/%zz', 400, 'bad_request', null, null],
      ['/elsewhere', 404, 'match', null, null],
    ]);
  });

  test('a body over 64 KiB is cut and marked', async () => {
    await admin(server.url, 'DELETE', 'requests');
    await mock(server.url, 'POST', '/mock/orders', { headers: { 'x-api-key': KEY }, body: 'a'.repeat(70_000) });
    const { body } = await admin(server.url, 'GET', 'requests');
    expect(body.requests[0].body).toBe('a'.repeat(65_536));
    expect(body.requests[0].bodyTruncated).toBe(true);
  });

  test('admin calls and health are not journaled and need no key', async () => {
    await admin(server.url, 'DELETE', 'requests');
    const before = (await admin(server.url, 'GET', 'usage')).body.requests;
    expect((await admin(server.url, 'GET', 'health')).status).toBe(200);
    expect((await admin(server.url, 'GET', 'endpoints')).status).toBe(200);
    expect((await admin(server.url, 'GET', 'requests/count')).body).toEqual({ count: 0 });
    expect((await admin(server.url, 'GET', 'usage')).body.requests).toBe(before);
  });
});

describe('queries', () => {
  test('filters: method, path with *, status, endpoint, step, since, limit; count', async () => {
    await admin(server.url, 'DELETE', 'requests');
    const auth = { 'x-api-key': KEY };
    await mock(server.url, 'GET', '/mock/users/1', { headers: auth });
    await mock(server.url, 'GET', '/mock/users/2', { headers: auth });
    await mock(server.url, 'POST', '/mock/orders', { headers: auth, body: '{}' });
    await mock(server.url, 'GET', '/mock/users/3');
    const paths = async (q: string) =>
      (await admin(server.url, 'GET', `requests?${q}`)).body.requests.map((e: any) => e.path);
    expect(await paths('method=get')).toEqual(['/mock/users/1', '/mock/users/2', '/mock/users/3']);
    expect(await paths('path=/mock/users/*')).toEqual(['/mock/users/1', '/mock/users/2', '/mock/users/3']);
    expect(await paths('path=/mock/users/2')).toEqual(['/mock/users/2']);
    expect(await paths('status=401')).toEqual(['/mock/users/3']);
    expect(await paths(`endpoint=${encodeURIComponent('GET /users/:id')}`)).toEqual(['/mock/users/1', '/mock/users/2']);
    expect(await paths('step=auth')).toEqual(['/mock/users/3']);
    expect(await paths('limit=2')).toEqual(['/mock/orders', '/mock/users/3']);
    const first = (await admin(server.url, 'GET', 'requests?limit=1')).body.requests[0].id;
    expect(await paths(`since=${first - 1}`)).toEqual(['/mock/users/3']);
    expect((await admin(server.url, 'GET', 'requests/count?method=GET&status=200')).body).toEqual({ count: 2 });
    expect(await admin(server.url, 'GET', 'requests?status=abc')).toMatchObject({
      status: 400,
      body: { error: 'bad_request' },
    });
  });

  test('DELETE /__mockapi/requests clears the journal', async () => {
    await mock(server.url, 'GET', '/mock/users/1', { headers: { 'x-api-key': KEY } });
    expect(await admin(server.url, 'DELETE', 'requests')).toMatchObject({ status: 200, body: { requests: [] } });
    expect((await admin(server.url, 'GET', 'requests')).body).toEqual({ requests: [] });
  });

  test('wait answers as soon as the request arrives; a timeout is 408 with what matched', async () => {
    const since =
      ((await admin(server.url, 'GET', 'requests?limit=1')).body.requests[0]?.id as number | undefined) ?? 0;
    const waiting = admin(server.url, 'GET', `requests/wait?path=/mock/orders&since=${since}&count=2&timeout=20s`);
    await mock(server.url, 'POST', '/mock/orders', { headers: { 'x-api-key': KEY }, body: '{"n":1}' });
    await mock(server.url, 'GET', '/mock/users/1', { headers: { 'x-api-key': KEY } });
    await mock(server.url, 'POST', '/mock/orders', { headers: { 'x-api-key': KEY }, body: '{"n":2}' });
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body.requests.map((e: any) => e.body)).toEqual(['{"n":1}', '{"n":2}']);

    const timedOut = await admin(
      server.url,
      'GET',
      `requests/wait?path=/mock/orders&since=${since}&count=3&timeout=100ms`,
    );
    expect(timedOut.status).toBe(408);
    expect(timedOut.body).toEqual({ error: 'timeout', message: expect.any(String), requests: answer.body.requests });
    // It names its filter and the closest requests it saw instead.
    expect(timedOut.body.message).toMatch(
      new RegExp(
        `^2 of 3 requests matching path=/mock/orders, since=${since} arrived within 100 ms; closest requests seen: #\\d+ GET /mock/users/1 → 200 \\(response, GET /users/:id\\): path differs$`,
      ),
    );
  });

  test('endpoints lists each endpoint with its answers and request count (since the journal was last cleared)', async () => {
    await admin(server.url, 'DELETE', 'requests');
    await mock(server.url, 'GET', '/mock/flaky', { headers: { 'x-api-key': KEY } });
    const { body } = await admin(server.url, 'GET', 'endpoints');
    expect(body.endpoints.map((e: any) => [e.endpoint, e.answers])).toEqual([
      ['POST /orders', ['response']],
      ['GET /users/:id', ['response']],
      ['GET /flaky', ['response']],
    ]);
    expect(body.endpoints[2].requests).toBe(1);
  });

  test('events stream each request as it is journaled', async () => {
    const res = await request(`${server.url}/__mockapi/events`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    let text = '';
    const got = new Promise<string>((done) => {
      res.body.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        const match = /event: request\ndata: (.*)\n\n/.exec(text);
        if (match) done(match[1]!);
      });
    });
    await mock(server.url, 'GET', '/mock/users/7', { headers: { 'x-api-key': KEY } });
    const entry = JSON.parse(await got);
    expect(entry).toMatchObject({ path: '/mock/users/7', status: 200, step: 'response' });
    res.body.destroy();
  });
});
