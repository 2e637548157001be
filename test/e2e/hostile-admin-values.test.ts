// Hostile values in admin calls: each is refused with its own 4xx JSON error (docs/admin-api.md),
// never a 500 and never a thrown stack overflow.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServe, stopAll, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin } from '../helpers/control.js';
import { connect } from 'node:net';

const KEY = 'mk_hostileValues00000000000000001';
const dir = useTempDir('mockapi-hostile-values-');
/** A list nested 8000 deep: describing it as JSON would overflow the stack. */
const DEEP = '['.repeat(8000) + ']'.repeat(8000);
/** `{"a":…}` nested `levels` deep (`{}` is one level). */
const nested = (levels: number): unknown => (levels === 1 ? {} : { a: nested(levels - 1) });

let server: ServeProcess;
beforeAll(async () => {
  server = await startServe([
    '-c',
    await writeConfig(
      dir.path,
      [
        `apiKey: ${KEY}`,
        'webhooks:',
        '  targets:',
        '    app: { url: "http://127.0.0.1:9/hook", retry: { schedule: none } }',
        '  events:',
        '    charge.succeeded: { data: { object: { status: succeeded } } }',
        'endpoints: []',
        '',
      ].join('\n'),
    ),
    '--no-state',
    '--no-watch',
    '--log',
    'off',
    '--clock',
    '2026-11-15T12:00:00Z',
  ]);
});
afterAll(stopAll);

describe('a value nested thousands deep', () => {
  test.each([
    ['usage', `{"requests":${DEEP}}`, 'requests must be a whole number ≥ 0, got a list'],
    ['usage', `{"meter":${DEEP}}`, 'meter must be the name of a meter, got a list'],
    ['usage', `{"meter":"m","value":${DEEP}}`, 'value must be a number from 0 to 9000000000, got a list'],
    ['usage', `{"key":${DEEP}}`, 'key must be the name of a key, got a list'],
    ['clock', `{"set":${DEEP}}`, 'set must be an ISO time such as 2026-11-30T23:59:59Z, got a list'],
    ['clock', `{"advance":${DEEP}}`, 'advance must be a duration such as 250ms, 2s, 1m, 1h or 31d, got a list'],
    [
      'webhooks/trigger',
      `{"event":"charge.succeeded","to":"app","data":${DEEP}}`,
      'data is nested more than 32 levels deep',
    ],
  ])('POST /__mockapi/%s %#: 400 bad_request naming the kind of value', async (path, body, message) => {
    const answer = await admin(server.url, 'POST', path, body);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: 'bad_request', message });
  });

  test('a trigger takes data 32 levels deep, as a resource body may be, and refuses 33', async () => {
    const trigger = (data: unknown) =>
      admin(server.url, 'POST', 'webhooks/trigger', { event: 'charge.succeeded', to: 'app', data });
    expect((await trigger(nested(32))).status).toBe(201);
    expect(await trigger(nested(33))).toMatchObject({
      status: 400,
      body: { error: 'bad_request', message: 'data is nested more than 32 levels deep' },
    });
  });
});

/** Sends `head` (a request line and headers) as is; resolves with the status, headers and body. */
function raw(url: string, head: string): Promise<{ status: number; headers: string; body: string }> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let got = '';
    socket.on('data', (d: Buffer) => (got += d.toString('utf8')));
    socket.on('error', reject);
    socket.on('end', () => {
      const [headers = '', body = ''] = got.split('\r\n\r\n');
      resolve({ status: Number(headers.split(' ')[1]), headers: headers.toLowerCase(), body });
    });
    socket.write(`${head}\r\nConnection: close\r\n\r\n`);
  });
}

describe('an admin path that cannot be decoded is still the admin API', () => {
  test.each([
    '/__mockapi/usage%00',
    '/__mockapi/reset%ZZ',
    '/__mockapi/requests/%ZZ',
    '/__session/s1/__mockapi/usage%ZZ',
  ])('%s: 403 for a foreign Host, a 400 without CORS headers for a preflight, never journaled', async (path) => {
    const foreign = await raw(server.url, `GET ${path} HTTP/1.1\r\nHost: evil.com`);
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body)).toMatchObject({ error: 'forbidden' });
    expect(foreign.headers).not.toContain('access-control-');
    const preflight = await raw(
      server.url,
      `OPTIONS ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.com\r\nAccess-Control-Request-Method: POST`,
    );
    expect(preflight.status).toBe(400);
    expect(JSON.parse(preflight.body)).toMatchObject({ error: 'bad_request' });
    expect(preflight.headers).not.toContain('access-control-');
    expect(preflight.headers).not.toContain('evil.com');
    expect((await admin(server.url, 'GET', 'requests')).body.requests).toEqual([]);
  });

  test('a mock path that cannot be decoded is still the mock 400, journaled', async () => {
    const answer = await raw(server.url, 'GET /mock/x%ZZ HTTP/1.1\r\nHost: 127.0.0.1');
    expect(answer.status).toBe(400);
    const { requests } = (await admin(server.url, 'GET', 'requests')).body;
    expect(requests.map((e: { path: string }) => e.path)).toEqual(['/mock/x%ZZ']);
    await admin(server.url, 'POST', 'reset', { journal: true });
  });
});

describe('an admin path named like an Object.prototype member', () => {
  test.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'constructor/x', '__proto__/x'])(
    '/__mockapi/%s is 404 not_found for every method',
    async (path) => {
      for (const method of ['GET', 'POST']) {
        const answer = await admin(server.url, method, path, {});
        expect(answer.status, method).toBe(404);
        expect(answer.body).toEqual({ error: 'not_found', message: `No admin call ${method} /__mockapi/${path}` });
        expect(answer.headers.allow).toBeUndefined();
      }
    },
  );

  test('a known path still lists its own methods only', async () => {
    const answer = await admin(server.url, 'DELETE', 'clock', {});
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, POST');
  });
});

describe('POST /__mockapi/clock', () => {
  test('without --clock: 409 no_virtual_clock whatever the body, before its values are read', async () => {
    const plain = await startServe([
      '-c',
      await writeConfig(dir.path, `apiKey: ${KEY}\nendpoints: []\n`, 'plain.yaml'),
      '--no-state',
      '--no-watch',
      '--log',
      'off',
    ]);
    for (const body of [{ set: 'nope' }, { set: 0 }, { advance: 'soon' }, { set: '2026-11-30T23:59:59Z' }, {}]) {
      const answer = await admin(plain.url, 'POST', 'clock', body);
      expect(answer.status, JSON.stringify(body)).toBe(409);
      expect(answer.body).toMatchObject({ error: 'no_virtual_clock' });
    }
  });

  test('set takes ISO time text only: a number is 400 naming the ISO time, and the clock stays', async () => {
    const before = Date.parse((await admin(server.url, 'GET', 'clock')).body.now);
    for (const set of [0, 1795000000000, true, { at: 0 }]) {
      const answer = await admin(server.url, 'POST', 'clock', { set });
      expect(answer.status, JSON.stringify(set)).toBe(400);
      expect(answer.body.error).toBe('bad_request');
      expect(answer.body.message).toMatch(/^set must be an ISO time such as 2026-11-30T23:59:59Z, got /);
    }
    const after = Date.parse((await admin(server.url, 'GET', 'clock')).body.now);
    expect(after - before).toBeGreaterThanOrEqual(0);
    expect(after - before).toBeLessThan(60_000);
    // ISO text is taken (the virtual clock runs on from there: the answer may be a few ms later).
    const set = Date.parse((await admin(server.url, 'POST', 'clock', { set: '2026-11-20T00:00:00Z' })).body.now);
    expect(set - Date.parse('2026-11-20T00:00:00Z')).toBeGreaterThanOrEqual(0);
    expect(set - Date.parse('2026-11-20T00:00:00Z')).toBeLessThan(60_000);
  });
});
