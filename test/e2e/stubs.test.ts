// Run-time stubs through the real CLI: POST/GET/DELETE /__mockapi/stubs, matched before the
// config's endpoints, newest first, through every step of the pipeline; `times` exact under
// concurrency; named in the journal; kept by hot reload, removed by reset; POST /__mockapi/usage.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { startServe, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin, mock } from '../helpers/control.js';

const KEY = 'mk_stubsKey00000000000000000000001';
const CONFIG = `apiKey: ${KEY}
limits:
  rateLimit: { requests: 1000, window: 1m }
  monthlyQuota: 5000
scenarios:
  cart: { initial: empty }
endpoints:
  - method: GET
    path: /users/:id
    response: { status: 200, body: { from: config } }
`;
const dir = useTempDir('mockapi-stubs-');
let serve: ServeProcess;
let file: string;
const auth = { 'x-api-key': KEY };
const get = (path: string, headers: Record<string, string> = auth) =>
  mock(serve.url, 'GET', `/mock${path}`, { headers });
const addStub = (body: unknown) => admin(serve.url, 'POST', 'stubs', body);

beforeAll(async () => {
  file = await writeConfig(dir.path, CONFIG);
  serve = await startServe(['-c', file, '--no-state', '--clock', '2026-11-30T23:59:00Z']);
});
afterAll(() => serve?.stop());
beforeEach(async () => {
  expect((await admin(serve.url, 'POST', 'reset', {})).status).toBe(200);
});

describe('POST /__mockapi/stubs', () => {
  test('201 with id, name, endpoint, times, remaining; the stub answers before the config', async () => {
    const endpoint = { method: 'GET', path: '/users/:id', response: { status: 418, body: { from: 'stub' } } };
    const added = await addStub({ endpoint, times: 2, name: 'teapot' });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{12}$/),
      name: 'teapot',
      endpoint,
      times: 2,
      remaining: 2,
    });
    expect(await get('/users/1')).toMatchObject({ status: 418, text: '{"from":"stub"}' });
    expect(await get('/users/2')).toMatchObject({ status: 418 });
    // Used up: removed, the config answers again.
    expect(await get('/users/3')).toMatchObject({ status: 200, text: '{"from":"config"}' });
    expect((await admin(serve.url, 'GET', 'stubs')).body).toEqual({ stubs: [] });
  });

  test('a stub without times answers until removed; the list shows remaining and hits', async () => {
    const { body } = await addStub({ endpoint: { method: 'POST', path: '/orders', response: { status: 201 } } });
    expect(body).toMatchObject({ name: null, times: null, remaining: null });
    for (let i = 0; i < 3; i++)
      expect((await mock(serve.url, 'POST', '/mock/orders', { headers: auth })).status).toBe(201);
    expect((await admin(serve.url, 'GET', 'stubs')).body).toEqual({ stubs: [{ ...body, hits: 3 }] });
    expect((await admin(serve.url, 'DELETE', `stubs/${body.id}`)).body).toEqual({ stubs: [] });
    expect((await mock(serve.url, 'POST', '/mock/orders', { headers: auth })).status).toBe(404);
    expect(await admin(serve.url, 'DELETE', `stubs/${body.id}`)).toMatchObject({
      status: 404,
      body: { error: 'not_found' },
    });
  });

  test('newest first, on the same route and across routes', async () => {
    await addStub({ endpoint: { method: 'GET', path: '/users/7', response: { body: 'static' } } });
    await addStub({ endpoint: { method: 'GET', path: '/users/:name', response: { body: 'param' } } });
    expect((await get('/users/7')).text).toBe('param');
    await addStub({ endpoint: { method: 'GET', path: '/users/:id', response: { body: 'newest' } } });
    expect((await get('/users/7')).text).toBe('newest');
    expect((await get('/users/8')).text).toBe('newest');
    const list = (await admin(serve.url, 'GET', 'stubs')).body.stubs.map(
      (s: { endpoint: { response: { body: string } } }) => s.endpoint.response.body,
    );
    expect(list).toEqual(['newest', 'param', 'static']);
    await admin(serve.url, 'DELETE', 'stubs');
    expect((await get('/users/7')).text).toBe('{"from":"config"}');
  });

  test('a HEAD request gets a GET stub; a wildcard stub answers its empty rest', async () => {
    await addStub({ endpoint: { method: 'GET', path: '/files/*', response: { status: 203, body: 'f' } } });
    expect((await mock(serve.url, 'HEAD', '/mock/files/a/b', { headers: auth })).status).toBe(203);
    expect((await get('/files')).status).toBe(203);
  });

  test('every step of the pipeline: auth, limits headers, delay, fail rate, dynamic answers, scenarios', async () => {
    await addStub({
      name: 'flow',
      endpoint: {
        method: 'GET',
        path: '/cart/:id',
        delay: '20ms',
        responses: [
          { when: { 'state.cart': 'full' }, body: { items: 1 } },
          {
            when: { 'params.id': '7' },
            sequence: [{ status: 503 }, { body: { id: '${params.id}', n: '${request}' }, setState: { cart: 'full' } }],
          },
        ],
      },
    });
    expect(await get('/cart/7', {})).toMatchObject({ status: 401 });
    const first = await get('/cart/7');
    expect(first.status).toBe(503);
    expect(first.headers['ratelimit-limit']).toBe('1000');
    const second = await get('/cart/7');
    expect(second).toMatchObject({ status: 200, text: '{"id":"7","n":2}' });
    expect(await get('/cart/1')).toMatchObject({ status: 200, text: '{"items":1}' });
    expect((await admin(serve.url, 'GET', 'scenarios')).body).toEqual({ cart: 'full' });
    await admin(serve.url, 'POST', 'stubs', { endpoint: { method: 'GET', path: '/boom', failRate: 1 } });
    expect(await get('/boom')).toMatchObject({
      status: 500,
      text: '{"error":"simulated_failure","message":"Random failure triggered"}',
    });
    const entries = (await admin(serve.url, 'GET', 'requests?path=/mock/cart/*')).body.requests;
    expect(
      entries.map((e: { endpoint: string; step: string; response: string | null }) => [e.endpoint, e.step]),
    ).toEqual([
      [null, 'auth'],
      ['stub flow: GET /cart/:id', 'response'],
      ['stub flow: GET /cart/:id', 'response'],
      ['stub flow: GET /cart/:id', 'response'],
    ]);
    expect(entries[1].ms).toBeGreaterThanOrEqual(15);
    const boom = (await admin(serve.url, 'GET', 'requests?path=/mock/boom')).body.requests[0];
    expect(boom.endpoint).toMatch(/^stub [0-9a-f]{12}: GET \/boom$/);
    expect(boom.step).toBe('failure');
  });

  test("a stub's own rate limit holds though no endpoint of the config has one, in each session apart", async () => {
    const endpoint = { method: 'GET', path: '/quota/:id', limits: { rateLimit: { requests: 2, window: '1m' } } };
    expect((await addStub({ name: 'tight', endpoint })).status).toBe(201);
    expect((await admin(serve.url, 'POST', 'stubs?session=st-own', { endpoint })).status).toBe(201);
    const statuses = async (headers: Record<string, string>) => {
      const out: number[] = [];
      for (let i = 0; i < 3; i++) out.push((await get(`/quota/${i}`, headers)).status);
      return out;
    };
    expect(await statuses(auth)).toEqual([200, 200, 429]);
    const refused = await get('/quota/9');
    expect(refused).toMatchObject({
      status: 429,
      text: '{"error":"Too many requests","message":"Rate limit exceeded"}',
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    // A named session has its own stub, and its window counts its own requests alone.
    expect(await statuses({ ...auth, 'x-mockapi-session': 'st-own' })).toEqual([200, 200, 429]);
    await admin(serve.url, 'DELETE', 'sessions/st-own');
    // The window is the stub's, not the path's: with the stub gone the config's endpoints answer as before.
    await admin(serve.url, 'DELETE', 'stubs');
    expect((await get('/quota/1')).status).toBe(404);
    expect((await get('/users/1')).status).toBe(200);
  });

  test('faults, and answers that read the request body', async () => {
    await addStub({ name: 'cut', endpoint: { method: 'GET', path: '/cut', faults: [{ kind: 'close', rate: 1 }] } });
    await expect(get('/cut')).rejects.toThrow();
    const cut = await waitFor(async () => (await admin(serve.url, 'GET', 'requests?path=/mock/cut')).body.requests[0]);
    expect(cut).toMatchObject({ endpoint: 'stub cut: GET /cut', step: 'fault' });
    await addStub({
      endpoint: {
        method: 'POST',
        path: '/echo',
        responses: [{ when: { 'body.n': 1 }, body: { got: '${body.n}' } }, { status: 422 }],
      },
    });
    const post = (body: string) =>
      mock(serve.url, 'POST', '/mock/echo', { headers: { ...auth, 'content-type': 'application/json' }, body });
    expect(await post('{"n":1}')).toMatchObject({ status: 200, text: '{"got":1}' });
    expect((await post('{"n":2}')).status).toBe(422);
  });

  test('times is exact under 50 concurrent requests', async () => {
    await addStub({
      endpoint: { method: 'GET', path: '/users/:id', delay: '10ms', response: { status: 299 } },
      times: 7,
    });
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => get(`/users/${i}`)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 299)).toHaveLength(7);
    expect(statuses.filter((s) => s === 200)).toHaveLength(43);
  });

  test('400 invalid_stub with every issue, positions as JSON pointers, messages as the config gives them', async () => {
    const bad = await addStub({
      endpoint: { method: 'FETCH', path: 'users', response: { status: 700, bodi: 1 } },
      times: 0,
      extra: true,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_stub');
    expect(Object.keys(bad.body)).toEqual(['error', 'issues']);
    const byPath = Object.fromEntries(
      bad.body.issues.map((i: { path: string; message: string }) => [i.path, i.message]),
    );
    expect(byPath['/endpoint/response/status']).toBe('endpoint.response.status must be between 100 and 599, got 700');
    expect(byPath['/endpoint/response/bodi']).toMatch(
      /^endpoint\.response\.bodi is not a known field; did you mean `body`\?/,
    );
    expect(byPath['/endpoint/method']).toMatch(/^endpoint\.method /);
    expect(byPath['/endpoint/path']).toMatch(/^endpoint\.path /);
    expect(byPath['/times']).toBe('times must be a whole number of at least 1, got 0');
    expect(byPath['/extra']).toBe('extra is not a known field; expected one of endpoint, times, name');
    expect(await addStub({})).toMatchObject({
      status: 400,
      body: {
        issues: [{ path: '/endpoint', message: 'endpoint is required: one endpoints[] item of the config, as JSON' }],
      },
    });
    const unknownScenario = await addStub({
      endpoint: { method: 'GET', path: '/x', response: { setState: { nope: 'a' } } },
    });
    expect(unknownScenario.body.issues[0].path).toBe('/endpoint/response/setState/nope');
    await addStub({ name: 'one', endpoint: { method: 'GET', path: '/x' } });
    expect((await addStub({ name: 'one', endpoint: { method: 'GET', path: '/y' } })).body.issues).toEqual([
      {
        path: '/name',
        message: 'name "one" is already the name of a stub; remove that one first or choose another name',
      },
    ]);
  });

  test('a stub body over server.maxBodySize is 413', async () => {
    const big = await addStub({
      endpoint: { method: 'GET', path: '/big', response: { body: 'x'.repeat(1024 * 1024 + 10) } },
    });
    expect(big).toMatchObject({ status: 413, body: { error: 'payload_too_large' } });
    // Above the other admin calls' 64 KiB, below maxBodySize: accepted.
    expect(
      (await addStub({ endpoint: { method: 'GET', path: '/big', response: { body: 'x'.repeat(200_000) } } })).status,
    ).toBe(201);
    expect((await get('/big')).text).toHaveLength(200_000);
  });
});

describe('reset, reload, usage', () => {
  test('reset removes stubs (part stubs) and puts the virtual clock back (part clock)', async () => {
    await addStub({ endpoint: { method: 'GET', path: '/kept', response: { status: 202 } } });
    await admin(serve.url, 'POST', 'clock', { advance: '2d' });
    const partial = await admin(serve.url, 'POST', 'reset', { stubs: false, clock: false });
    expect(partial.body.reset).toEqual(['journal', 'usage', 'rateLimit', 'sequences', 'scenarios']);
    expect((await get('/kept')).status).toBe(202);
    expect((await admin(serve.url, 'GET', 'clock')).body.now.slice(0, 10)).toBe('2026-12-02');
    const all = await admin(serve.url, 'POST', 'reset', {});
    expect(all.body.reset).toEqual(['journal', 'usage', 'rateLimit', 'sequences', 'scenarios', 'clock', 'stubs']);
    expect((await get('/kept')).status).toBe(404);
    expect((await admin(serve.url, 'GET', 'clock')).body.now.slice(0, 16)).toBe('2026-11-30T23:59');
  });

  test('hot reload keeps stubs (recompiled for the new config)', async () => {
    await addStub({ endpoint: { method: 'GET', path: '/users/:id', response: { status: 206 } } });
    await writeFile(file, CONFIG.replace('requests: 1000', 'requests: 999'));
    await waitFor(async () => (await get('/users/1')).headers['ratelimit-limit'] === '999');
    expect((await get('/users/1')).status).toBe(206);
    await writeFile(file, CONFIG);
    await waitFor(async () => (await get('/users/1')).headers['ratelimit-limit'] === '1000');
  });

  test('POST /__mockapi/usage sets the month count: the quota edge without sending the requests', async () => {
    const set = await admin(serve.url, 'POST', 'usage', { requests: 4999 });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ requests: 4999, quota: 5000, remaining: 1 });
    expect((await get('/users/1')).status).toBe(200);
    expect(await get('/users/1')).toMatchObject({
      status: 429,
      text: '{"error":"Monthly request quota exceeded","code":"QUOTA_EXCEEDED"}',
    });
    expect(await admin(serve.url, 'POST', 'usage', { requests: -1 })).toMatchObject({
      status: 400,
      body: { error: 'bad_request' },
    });
    expect(await admin(serve.url, 'POST', 'usage', { requests: 1, key: 'ci' })).toMatchObject({ status: 404 });
    expect((await admin(serve.url, 'POST', 'usage', { requests: 0, key: 'default' })).body.requests).toBe(0);
  });
});
