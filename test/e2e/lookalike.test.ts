// Black-box tests of the look-alike fields: `server.basePath`, `auth.accept` and `errors:` — the real
// CLI on port 0, exact statuses, headers and bodies, and the journal and log as a user reads them.
import { afterAll, describe, expect, test } from 'vitest';
import { runCli, startServe, stopAll, tempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_lookalikeTest000000000000000001';
afterAll(stopAll);

async function serve(yaml: string[], args: string[] = []): Promise<ServeProcess> {
  const dir = await tempDir('mockapi-lookalike-');
  return startServe([
    '-c',
    await writeConfig(dir, [`apiKey: ${KEY}`, ...yaml, ''].join('\n')),
    '--no-state',
    '--no-watch',
    '--log',
    'json',
    ...args,
  ]);
}

const PRODUCTS = ['endpoints:', '  - method: GET', '    path: /products', '    response: { body: [{ id: 1 }] }'];

async function call(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: string }> {
  const res = await fetch(url, init);
  return { status: res.status, headers: res.headers, body: await res.text() };
}

interface Entry {
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  status: number;
  notes: string[];
  credential: { via: string; name?: string; key: string };
}

async function journal(proc: ServeProcess, count: number): Promise<Entry[]> {
  return waitFor(async () => {
    const { requests } = (await (await fetch(`${proc.url}/__mockapi/requests`)).json()) as { requests: Entry[] };
    return requests.length >= count ? requests : undefined;
  });
}

describe('server.basePath', () => {
  test('/v1 replaces /mock: matching, 404 messages, the journal; /mock is then outside', async () => {
    const proc = await serve(['server: { basePath: /v1 }', ...PRODUCTS]);
    const ok = await call(`${proc.url}/v1/products`, { headers: { 'x-api-key': KEY } });
    expect([ok.status, ok.body]).toEqual([200, '[{"id":1}]']);
    const miss = await call(`${proc.url}/v1/nope?x=1`, { headers: { 'x-api-key': KEY } });
    expect([miss.status, miss.body]).toEqual([
      404,
      '{"error":"not_found","message":"No endpoint configured for GET /nope"}',
    ]);
    const old = await call(`${proc.url}/mock/products`, { headers: { 'x-api-key': KEY } });
    expect([old.status, old.body]).toEqual([
      404,
      '{"error":"not_found","message":"No endpoint configured for GET /mock/products"}',
    ]);
    const preflight = await call(`${proc.url}/v1/products`, {
      method: 'OPTIONS',
      headers: { origin: 'http://app.test', 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    const entries = await journal(proc, 4);
    expect(entries.map((e) => [e.path, e.status])).toEqual([
      ['/v1/products', 200],
      ['/v1/nope', 404],
      ['/mock/products', 404],
      ['/v1/products', 204],
    ]);
  });

  test('a request outside the base path gets the exact 404, and the log and journal name the path it meant', async () => {
    const proc = await serve(PRODUCTS);
    const res = await call(`${proc.url}/products`, { headers: { 'x-api-key': KEY } });
    expect([res.status, res.headers.get('content-type'), res.body]).toEqual([
      404,
      'application/json; charset=utf-8',
      '{"error":"not_found","message":"No endpoint configured for GET /products"}',
    ]);
    const [entry] = await journal(proc, 1);
    expect(entry!.notes).toEqual(['served under /mock: did you mean /mock/products?']);
    await proc.waitForOutput(/served under \/mock: did you mean \/mock\/products\?/, 'stdout');
    // A path that would match nothing there gets no note.
    await call(`${proc.url}/elsewhere`);
    const entries = await journal(proc, 2);
    expect(entries[1]!.notes).toEqual([]);
  });

  test("`/` serves at the root; /__mockapi/ stays mockapi's own", async () => {
    const proc = await serve(['server: { basePath: / }', ...PRODUCTS]);
    const ok = await call(`${proc.url}/products`, { headers: { authorization: `Bearer ${KEY}` } });
    expect([ok.status, ok.body]).toEqual([200, '[{"id":1}]']);
    const miss = await call(`${proc.url}/nope`, { headers: { 'x-api-key': KEY } });
    expect(miss.body).toBe('{"error":"not_found","message":"No endpoint configured for GET /nope"}');
    const health = await call(`${proc.url}/__mockapi/health`);
    expect(health.status).toBe(200);
    const noKey = await call(`${proc.url}/products`);
    expect(noKey.status).toBe(401);
    const project = (await (await fetch(`${proc.url}/__mockapi/project`)).json()) as { basePath: string };
    expect(project.basePath).toBe('/');
  });

  test.each([
    ['v1', 'server.basePath must start with `/`'],
    ['/__mockapi', 'server.basePath cannot be `/__mockapi` or under it'],
    ['/__mockapi/v1', 'server.basePath cannot be `/__mockapi` or under it'],
  ])('basePath %s is a config error', async (basePath, message) => {
    const dir = await tempDir('mockapi-lookalike-');
    const file = await writeConfig(dir, [`apiKey: ${KEY}`, `server: { basePath: "${basePath}" }`, ''].join('\n'));
    const result = await runCli(['validate', '-c', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`mockapi.yaml:2:`);
    expect(result.stderr).toContain(message);
  });
});

describe('auth.accept', () => {
  const ACCEPT = [
    'auth:',
    '  accept: [{ query: api_key }, { scheme: Token }, { header: X-Custom-Key }, { cookie: session }]',
  ];

  test('each place reads the key; the first present decides; the default places no longer count', async () => {
    const proc = await serve([...ACCEPT, ...PRODUCTS]);
    const status = async (path: string, headers: Record<string, string> = {}) =>
      (await call(`${proc.mock}${path}`, { headers })).status;
    expect(await status(`/products?api_key=${KEY}`)).toBe(200);
    expect(await status('/products', { authorization: `token ${KEY}` })).toBe(200);
    expect(await status('/products', { 'x-custom-key': KEY })).toBe(200);
    expect(await status('/products', { cookie: `a=b; session=${KEY}` })).toBe(200);
    // The query comes first: a wrong key there decides even with a good header.
    expect(await status('/products?api_key=wrong', { 'x-custom-key': KEY })).toBe(401);
    // Places not listed are not read.
    const missing = await call(`${proc.mock}/products`, {
      headers: { 'x-api-key': KEY, authorization: `Bearer ${KEY}` },
    });
    expect([missing.status, missing.body, missing.headers.get('www-authenticate')]).toEqual([
      401,
      '{"error":"Unauthorized","message":"No API key provided"}',
      'Bearer realm="mockapi"',
    ]);
    const invalid = await call(`${proc.mock}/products`, { headers: { authorization: 'Token nope' } });
    expect([invalid.status, invalid.body]).toEqual([401, '{"error":"Unauthorized","message":"Invalid API key"}']);
  });

  test('a key in the query, a custom header or a cookie never reaches the journal or the log — a wrong one neither', async () => {
    const proc = await serve([...ACCEPT, ...PRODUCTS]);
    await call(`${proc.mock}/products?api_key=${KEY}&page=2`);
    await call(`${proc.mock}/products?api_key=wrong_secret_value`);
    await call(`${proc.mock}/products`, { headers: { 'x-custom-key': 'another_wrong_value' } });
    const entries = await journal(proc, 3);
    expect(entries[0]!.query).toEqual({ api_key: '<redacted>', page: '2' });
    expect(entries[0]!.credential).toEqual({ via: 'query', name: 'api_key', key: 'current' });
    expect(entries[1]!.query).toEqual({ api_key: '<redacted>' });
    expect(entries[1]!.credential).toEqual({ via: 'query', name: 'api_key', key: 'unknown' });
    expect(entries[2]!.headers['x-custom-key']).toBe('<redacted>');
    expect(entries[2]!.credential).toEqual({ via: 'header', name: 'X-Custom-Key', key: 'unknown' });
    const text = JSON.stringify(entries) + proc.stdout() + proc.stderr();
    for (const secret of [KEY, 'wrong_secret_value', 'another_wrong_value']) expect(text).not.toContain(secret);
  });

  test('the default list behaves as before: X-API-Key over Authorization', async () => {
    const proc = await serve(['auth: { accept: [x-api-key, bearer, basic] }', ...PRODUCTS]);
    const basic = Buffer.from(`${KEY}:`).toString('base64');
    expect((await call(`${proc.mock}/products`, { headers: { authorization: `Basic ${basic}` } })).status).toBe(200);
    expect(
      (await call(`${proc.mock}/products`, { headers: { 'x-api-key': 'wrong', authorization: `Bearer ${KEY}` } }))
        .status,
    ).toBe(401);
    expect((await call(`${proc.mock}/products`, { headers: { authorization: `Digest ${KEY}` } })).body).toBe(
      '{"error":"Unauthorized","message":"No API key provided"}',
    );
  });
});

describe('errors:', () => {
  test('templates reshape the answers, read error.* and key.masked, and keep limit headers and Retry-After', async () => {
    const proc = await serve([
      'limits:',
      '  rateLimit: { requests: 1, window: 1m }',
      '  headers: x',
      'errors:',
      '  invalidKey:',
      '    headers: { www-authenticate: \'Bearer realm="Example"\' }',
      '    body: { error: { type: invalid_request_error, message: "Invalid API Key provided: ${key.masked}" } }',
      '  missingKey:',
      '    status: 403',
      '    body: { message: Requires authentication }',
      '  rateLimited:',
      '    body: { error: { message: "Slow down: retry in ${error.retryAfter} s", key: "${key.name}" } }',
      '  notFound:',
      '    headers: { content-type: text/plain }',
      '    body: "nothing at ${error.method} ${error.path}"',
      ...PRODUCTS,
      '  - method: GET',
      '    path: /flaky',
      '    failRate: 1',
      '    errors: { simulatedFailure: { status: 502, body: { error: { type: api_error } } } }',
    ]);
    const invalid = await call(`${proc.mock}/products`, {
      headers: { authorization: 'Bearer sk_test_0000000000001234' },
    });
    expect([
      invalid.status,
      invalid.headers.get('content-type'),
      invalid.headers.get('www-authenticate'),
      invalid.body,
    ]).toEqual([
      401,
      'application/json; charset=utf-8',
      'Bearer realm="Example"',
      '{"error":{"type":"invalid_request_error","message":"Invalid API Key provided: …1234"}}',
    ]);
    const missing = await call(`${proc.mock}/products`);
    expect([missing.status, missing.headers.get('www-authenticate'), missing.body]).toEqual([
      403,
      'Bearer realm="mockapi"',
      '{"message":"Requires authentication"}',
    ]);
    const ok = await call(`${proc.mock}/products`, { headers: { 'x-api-key': KEY } });
    expect(ok.status).toBe(200);
    const limited = await call(`${proc.mock}/nope`, { headers: { 'x-api-key': KEY } });
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('1');
    expect(JSON.parse(limited.body)).toEqual({
      error: { message: `Slow down: retry in ${retryAfter} s`, key: 'default' },
    });
  });

  test("notFound with its own content type, an endpoint's simulatedFailure, and the defaults elsewhere", async () => {
    const proc = await serve([
      'errors:',
      '  notFound:',
      '    headers: { content-type: text/plain }',
      '    body: "nothing at ${error.method} ${error.path}"',
      '  simulatedFailure: { body: { error: config-wide } }',
      ...PRODUCTS,
      '  - { method: GET, path: /flaky, failRate: 1, errors: { simulatedFailure: { status: 502, body: { error: { type: api_error } } } } }',
      '  - { method: GET, path: /broken, failRate: 1 }',
    ]);
    const headers = { 'x-api-key': KEY, origin: 'http://app.test' };
    const miss = await call(`${proc.mock}/product?x=1`, { headers });
    expect([
      miss.status,
      miss.headers.get('content-type'),
      miss.headers.get('access-control-allow-origin'),
      miss.body,
    ]).toEqual([404, 'text/plain', 'http://app.test', 'nothing at GET /product']);
    const flaky = await call(`${proc.mock}/flaky`, { headers });
    expect([flaky.status, flaky.body]).toEqual([502, '{"error":{"type":"api_error"}}']);
    const broken = await call(`${proc.mock}/broken`, { headers });
    expect([broken.status, broken.body]).toEqual([500, '{"error":"config-wide"}']);
    const entries = await journal(proc, 3);
    expect(entries.map((e) => [e.status, e.notes])).toEqual([
      [404, ['did you mean GET /products?']],
      [502, ['simulated failure']],
      [500, ['simulated failure']],
    ]);
  });

  test('quotaExceeded, payloadTooLarge and badRequest take their templates too; Retry-After stays', async () => {
    const proc = await serve([
      'server: { maxBodySize: 10 }',
      'limits: { monthlyQuota: 1, quotaRetryAfter: 30s }',
      'errors:',
      '  quotaExceeded: { body: { error: { type: insufficient_quota, retry: "${error.retryAfter}" } } }',
      '  payloadTooLarge: { status: 400, body: { error: { message: "${error.message}" } } }',
      '  badRequest: { body: { error: { type: invalid_request, path: "${error.path}" } } }',
      ...PRODUCTS,
      '  - { method: POST, path: /orders }',
    ]);
    const headers = { 'x-api-key': KEY };
    expect((await call(`${proc.mock}/products`, { headers })).status).toBe(200);
    const quota = await call(`${proc.mock}/products`, { headers });
    expect([quota.status, quota.headers.get('retry-after'), quota.body]).toEqual([
      429,
      '30',
      '{"error":{"type":"insufficient_quota","retry":30}}',
    ]);
    const large = await call(`${proc.mock}/orders`, { method: 'POST', headers, body: 'x'.repeat(100) });
    expect([large.status, large.body]).toEqual([
      400,
      '{"error":{"message":"Request body exceeds the limit of 10 bytes"}}',
    ]);
    const bad = await call(`${proc.mock}/%zz`, { headers });
    expect([bad.status, bad.headers.get('content-type'), JSON.parse(bad.body).error.type]).toEqual([
      400,
      'application/json; charset=utf-8',
      'invalid_request',
    ]);
  });

  test('an unknown kind, or an expression that reads what does not exist, is a config error', async () => {
    const dir = await tempDir('mockapi-lookalike-');
    const file = await writeConfig(
      dir,
      [
        `apiKey: ${KEY}`,
        'errors:',
        '  invalidkey: { status: 401 }',
        '  notFound:',
        '    body: { message: "${error.nope.x} ${secret}" }',
        '',
      ].join('\n'),
    );
    const result = await runCli(['validate', '-c', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/mockapi\.yaml:3:\d+: errors\.invalidkey .*invalidKey/);
    expect(result.stderr).toMatch(/mockapi\.yaml:5:\d+: errors\.notFound\.body\.message .*unknown source `secret`/);
  });
});
