// Issue 6: property-based checks of what a request can send. readRequestPath and checkAuth never
// throw and keep their promises for any input; and a running server, fed random methods, targets
// and credentials over a raw socket, always answers with one of its own statuses, never a 500.
// (Config, unit and single-header auth properties live in config-properties, units and auth tests.)
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { request } from 'undici';
import { checkAuth, createKeyMatcher } from '../../src/pipeline/auth.js';
import { plainRequestPath, readRequestPath } from '../../src/http/request-path.js';
import { startMockServer, type MockServer } from '../../src/mock-server.js';
import { sendRaw } from '../fixtures/hardening/raw-http.js';

const KEY = 'mk_fuzzKey0123456789abcdefghijklmno';

/** Pieces paths are made of, the awkward ones over-represented. */
const pathPiece = fc.oneof(
  fc.constantFrom(
    '/',
    '//',
    '.',
    '..',
    '%2e',
    '%2E',
    '%2e%2e',
    '.%2E',
    '%2f',
    '%2F',
    '%5c',
    '\\',
    '%00',
    '%',
    '%zz',
    '%C0%AF',
    '%ED%A0%80',
    '%F0%9F%98%80',
    '%41',
    ':',
    '*',
    '~',
    'users',
    'a',
    'b',
    '42',
  ),
  fc.string({ unit: fc.constantFrom(..."abcxyz019-._~!$&'()*+,;=:@%".split('')), maxLength: 8 }),
);
const rawPath = fc.array(pathPiece, { maxLength: 25 }).map((parts) => parts.join(''));

function decodesTo(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

describe('readRequestPath', () => {
  test('never throws; an error exactly when the path cannot be decoded or holds a NUL; no dot segments left', () => {
    fc.assert(
      fc.property(rawPath, fc.constantFrom('', '?q=%zz', '?a=1#f', '#frag'), (path, suffix) => {
        const target = `/mock${path}${suffix}`;
        const result = readRequestPath(target);
        const decoded = decodesTo(`/mock${path}`);
        const shouldFail = decoded === undefined || decoded.includes('\0');
        expect(result.error !== undefined).toBe(shouldFail);
        if (result.error !== undefined) return;
        expect(result.path.startsWith('/')).toBe(true);
        expect(result.path).not.toMatch(/[?#]/);
        for (const segment of result.path.split('/').slice(1)) {
          expect(['.', '..']).not.toContain(decodesTo(segment));
        }
        expect(readRequestPath(result.path).path).toBe(result.path); // already normal
      }),
      { numRuns: 3000 },
    );
  });

  test('plainRequestPath, the fast path, answers only where readRequestPath gives the same path and no error', () => {
    const target = fc.oneof(
      fc
        .tuple(rawPath, fc.constantFrom('', '?q=%zz', '?a=1#f', '#frag', '?x=/./..'))
        .map(([path, suffix]) => `/mock${path}${suffix}`),
      fc.string({ unit: 'binary', maxLength: 60 }),
    );
    let plain = 0;
    fc.assert(
      fc.property(target, (t) => {
        const fast = plainRequestPath(t);
        if (fast === undefined) return;
        plain++;
        expect(readRequestPath(t)).toEqual({ path: fast });
      }),
      { numRuns: 5000 },
    );
    expect(plain).toBeGreaterThan(100); // the property was checked on real plain targets
    expect(plainRequestPath('/mock/users/42?id=7')).toBe('/mock/users/42');
    expect(plainRequestPath('/mock/users/42')).toBe('/mock/users/42');
    for (const t of ['/mock/a/../b', '/mock/%41', '/mock/a#f', 'http://h/mock/a', '*', '/mock/.well-known'])
      expect(plainRequestPath(t)).toBeUndefined();
  });

  test('never throws on any string at all', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (target) => {
        const result = readRequestPath(target);
        expect(typeof result.path).toBe('string');
      }),
      { numRuns: 2000 },
    );
  });
});

describe('checkAuth with repeated X-API-Key headers', () => {
  const matcher = createKeyMatcher(KEY);
  const value = fc.oneof(fc.constant(KEY), fc.constant(''), fc.constant(' '), fc.string({ maxLength: 40 }));

  test('never authenticates when two or more values are sent, however Node presents them', () => {
    fc.assert(
      fc.property(
        fc.array(value, { minLength: 2, maxLength: 4 }),
        fc.option(fc.constant(`Bearer ${KEY}`), { nil: undefined }),
        (values, authorization) => {
          fc.pre(values.some((v) => v.trim() !== ''));
          // Node joins a repeated header with ", "; as an array it is each value
          for (const header of [values.join(', '), values]) {
            expect(checkAuth({ 'x-api-key': header, authorization }, matcher)).not.toBe('ok');
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('a live server fed random requests', () => {
  let server: MockServer;

  beforeAll(async () => {
    server = await startMockServer({
      config: {
        apiKey: KEY,
        server: { maxBodySize: 64 },
        endpoints: [
          { method: 'GET', path: '/users/:id', response: { body: { id: 42 } } },
          { method: 'POST', path: '/orders', response: { status: 201, body: 'created' } },
          { method: 'GET', path: '/files/*', response: { body: 'wild' } },
          { method: 'DELETE', path: '/orders/:id', response: { status: 204 } },
        ],
      },
      port: 0,
    });
  });

  afterAll(async () => {
    await server.close();
  });

  const printable = fc.string({
    unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
    maxLength: 40,
  });
  const anyByte = fc.string({
    unit: fc.integer({ min: 0, max: 0xff }).map((c) => String.fromCharCode(c)),
    maxLength: 20,
  });
  const requestArb = fc.record({
    method: fc.constantFrom('GET', 'POST', 'HEAD', 'OPTIONS', 'DELETE', 'PUT', 'PATCH', 'PROPFIND', 'get', 'G E T'),
    path: fc.oneof(
      fc.constantFrom(
        '/mock/users/1',
        '/mock/users/%F0%9F%98%80',
        '/mock/orders',
        '/mock/orders/7/',
        '/mock/files/x/../y',
        '/mock/x/%2e%2e/users/2',
      ),
      rawPath.map((p) => `/mock${p}`),
      printable.map((p) => `/mock/${p}`),
      printable,
    ),
    query: fc.oneof(
      fc.constant(''),
      printable.map((q) => `?${q}`),
    ),
    apiKey: fc.option(fc.oneof(fc.constant(KEY), fc.constant(KEY), printable, anyByte), { nil: undefined }),
    authorization: fc.option(
      fc.oneof(
        fc.constant(`Bearer ${KEY}`),
        printable.map((t) => `Basic ${t}`),
        printable.map((t) => `Bearer ${t}`),
        anyByte,
      ),
      { nil: undefined },
    ),
    origin: fc.option(fc.oneof(printable, anyByte), { nil: undefined }),
    preflight: fc.boolean(),
    body: fc.option(fc.string({ maxLength: 100 }), { nil: undefined }),
    chunked: fc.boolean(),
  });

  type FuzzRequest = typeof requestArb extends fc.Arbitrary<infer T> ? T : never;

  function serialize(r: FuzzRequest): string {
    const lines = [`${r.method} ${r.path}${r.query} HTTP/1.1`, 'Host: fuzz', 'Connection: close'];
    if (r.apiKey !== undefined) lines.push(`X-API-Key: ${r.apiKey}`);
    if (r.authorization !== undefined) lines.push(`Authorization: ${r.authorization}`);
    if (r.origin !== undefined) lines.push(`Origin: ${r.origin}`);
    if (r.preflight) lines.push('Access-Control-Request-Method: POST');
    let body = '';
    if (r.body !== undefined) {
      const bytes = Buffer.from(r.body, 'utf8');
      if (r.chunked) {
        lines.push('Transfer-Encoding: chunked');
        body =
          bytes.length === 0 ? '0\r\n\r\n' : `${bytes.length.toString(16)}\r\n${bytes.toString('latin1')}\r\n0\r\n\r\n`;
      } else {
        lines.push(`Content-Length: ${bytes.length}`);
        body = bytes.toString('latin1');
      }
    }
    return `${lines.join('\r\n')}\r\n\r\n${body}`;
  }

  const plain: FuzzRequest = {
    method: 'GET',
    path: '/mock/users/1',
    query: '',
    apiKey: KEY,
    authorization: undefined,
    origin: undefined,
    preflight: false,
    body: undefined,
    chunked: false,
  };
  /** One request for each answer the coverage check expects: 200, 400 (bad encoding), 401, 404. */
  const COVERING_EXAMPLES: [FuzzRequest][] = [
    [plain],
    [{ ...plain, path: '/mock/users/%zz' }],
    [{ ...plain, apiKey: undefined }],
    [{ ...plain, path: '/mock/nope' }],
  ];

  test('every answer is one of its own statuses, errors are JSON, nothing is a 500, and the server keeps answering', async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(requestArb, async (r) => {
        const result = await sendRaw(server.port, serialize(r), { head: r.method === 'HEAD' });
        expect(result.ended).toBe('closed');
        expect(result.responses).toHaveLength(1);
        const [answer] = result.responses;
        seen.add(answer!.status);
        expect([200, 201, 204, 400, 401, 404, 413, 431]).toContain(answer!.status);
        if (answer!.status >= 400) {
          expect(answer!.headers['content-type']).toBe('application/json; charset=utf-8');
          if (r.method !== 'HEAD') expect(Object.keys(JSON.parse(answer!.body)).sort()).toEqual(['error', 'message']);
        }
        if (answer!.status === 200 || answer!.status === 201 || answer!.status === 404) {
          // admitted: the key itself, or no X-API-Key and the key as a Bearer token (an unknown path without one is a 401)
          const viaBearer = (r.apiKey === undefined || r.apiKey.trim() === '') && r.authorization === `Bearer ${KEY}`;
          const resolved = readRequestPath(`${r.path}${r.query}`).path;
          if (resolved.startsWith('/mock/') || resolved === '/mock') expect(r.apiKey === KEY || viaBearer).toBe(true);
        }
      }),
      // The coverage check below must not depend on luck (a run without a 200 failed it about once in
      // ten): these requests always run first, then 400 generated ones.
      { numRuns: 400, examples: COVERING_EXAMPLES },
    );
    // the run covered the interesting answers
    for (const status of [200, 400, 401, 404]) expect(seen).toContain(status);
    const res = await request(`${server.url}/mock/users/1`, { headers: { 'x-api-key': KEY } });
    expect([res.statusCode, await res.body.text()]).toEqual([200, '{"id":42}']);
  }, 60_000);
});
