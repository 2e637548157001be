// Sessions (issue 42) against the limits' later parts and every admin call, through the real CLI:
// a named session's meters and a plan's windows are its own (the meters' reserves and settles count
// in the session that asked), and no admin call, wait or event stream naming one session shows
// anything another session did — by `?session=`, by the header and by the path prefix.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { request } from 'undici';
import { startServe, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin, mock } from '../helpers/control.js';

const KEY = 'mk_sessionsScope00000000000000000001';
const PRO = 'sk_test_sessionsScopePro0000000001';
const CONFIG = `apiKey: ${KEY}
limits:
  meters:
    tokens: { limit: 100, window: 1m }
    spend: { limit: 2, window: month }
keys:
  - { name: ci, key: ${PRO}, plan: pro }
plans:
  pro: { rateLimit: { requests: 2, window: 1m } }
scenarios:
  cart: { initial: empty }
endpoints:
  - method: POST
    path: /work
    cost:
      tokens: { reserve: "\${body.reserve}", settle: "\${response.body.used}" }
      spend: "\${response.body.used / 100}"
    response: { body: { used: "\${body.used}" } }
  - method: GET
    path: /plain
    response: { body: { ok: true } }
resources:
  customers:
    style: stripe
    path: /v1/customers
    fields: { object: customer, email: null }
`;
const dir = useTempDir('mockapi-sessions-scope-');
let serve: ServeProcess;
const inSession = (id: string): Record<string, string> => (id === '' ? {} : { 'x-mockapi-session': id });
const work = (session: string, reserve: number, used: number) =>
  mock(serve.url, 'POST', '/mock/work', {
    headers: { 'x-api-key': KEY, 'content-type': 'application/json', ...inSession(session) },
    body: JSON.stringify({ reserve, used }),
  });
type Meters = Record<string, { used: number; remaining: number }>;
const adminText = async (path: string): Promise<string> => JSON.stringify((await admin(serve.url, 'GET', path)).body);
const metersOf = async (session: string): Promise<Meters> =>
  (await admin(serve.url, 'GET', 'usage', undefined, inSession(session))).body.meters as Meters;

beforeAll(async () => {
  serve = await startServe([
    '-c',
    await writeConfig(dir.path, CONFIG),
    '--no-state',
    '--clock',
    '2026-07-01T00:00:00Z',
  ]);
});
afterAll(() => serve?.stop());

describe("a named session's meters and plans are its own", () => {
  test('reserves and settles count in the session that asked; its spent budget refuses it alone', async () => {
    expect((await work('mt-a', 80, 60)).status).toBe(200);
    await expect.poll(async () => (await metersOf('mt-a')).tokens?.used).toBe(60);
    expect((await metersOf('mt-a')).spend).toMatchObject({ used: 0.6 });
    expect((await metersOf('mt-b')).tokens).toMatchObject({ used: 0, remaining: 100 });
    expect((await metersOf('')).tokens).toMatchObject({ used: 0, remaining: 100 });
    // 60 used of 100: a reserve of 50 does not fit in mt-a; it fits in mt-b and in the default session.
    const refused = await work('mt-a', 50, 1);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.text)).toEqual({ error: 'Too many requests', message: 'Rate limit exceeded' });
    expect((await work('mt-b', 50, 1)).status).toBe(200);
    expect((await work('', 50, 1)).status).toBe(200);
    // The month's spend of one session set to its limit: that session alone is refused as spent.
    expect((await admin(serve.url, 'POST', 'usage?session=mt-spent', { meter: 'spend', value: 2 })).status).toBe(200);
    expect((await work('mt-spent', 1, 1)).status).toBe(429);
    expect((await work('mt-b', 1, 1)).status).toBe(200);
    await expect.poll(async () => (await metersOf('mt-b')).tokens?.used).toBe(2);
    expect((await metersOf('')).tokens?.used).toBe(1);
  });

  test("a plan's rate window counts each session's requests of its key apart", async () => {
    const plain = (session: string) =>
      mock(serve.url, 'GET', '/mock/plain', { headers: { 'x-api-key': PRO, ...inSession(session) } });
    expect([(await plain('pl-a')).status, (await plain('pl-a')).status, (await plain('pl-a')).status]).toEqual([
      200, 200, 429,
    ]);
    expect([(await plain('pl-b')).status, (await plain('pl-b')).status]).toEqual([200, 200]);
    expect((await plain('')).status).toBe(200);
  });
});

describe('no admin call naming one session shows another session’s data', () => {
  const MARK = 'only-in-sx-a';
  // What session sx-a leaves behind: requests, a stub, a scenario state, a moved clock, an object, a spent meter.
  beforeAll(async () => {
    const h = { 'x-api-key': KEY, ...inSession('sx-a') };
    await mock(serve.url, 'GET', `/mock/plain?mark=${MARK}`, { headers: h });
    await mock(serve.url, 'POST', '/mock/v1/customers', {
      headers: { ...h, 'content-type': 'application/x-www-form-urlencoded' },
      body: `email=${MARK}%40example.com`,
    });
    await work('sx-a', 10, 10);
    await admin(serve.url, 'POST', 'stubs?session=sx-a', {
      name: MARK,
      endpoint: { method: 'GET', path: '/plain', response: { body: { mark: MARK } } },
    });
    await admin(serve.url, 'PUT', 'scenarios/cart?session=sx-a', { state: 'full' });
    await admin(serve.url, 'POST', 'clock?session=sx-a', { advance: '400d' });
    await admin(serve.url, 'POST', 'usage?session=sx-a', { requests: 77 });
  });

  // Every read of the admin API; each answer to a caller naming sx-b must hold nothing of sx-a's.
  const reads = [
    'requests?limit=1000',
    'requests/count',
    `requests/wait?timeout=50ms&query.mark=${MARK}`,
    'usage',
    'stubs',
    'scenarios',
    'clock',
    'endpoints',
    'resources/customers',
    'sessions',
    'project',
  ];
  const ways: [string, (path: string) => Promise<{ status: number; text: string }>][] = [
    ['?session=', (path) => get(`/__mockapi/${path}${path.includes('?') ? '&' : '?'}session=sx-b`)],
    ['the header', (path) => get(`/__mockapi/${path}`, inSession('sx-b'))],
    ['the path prefix', (path) => get(`/__session/sx-b/__mockapi/${path}`)],
  ];
  async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
    const res = await request(`${serve.url}${path}`, { headers });
    return { status: res.statusCode, text: await res.body.text() };
  }

  test.each(ways)('named by %s', async (_way, call) => {
    // sx-a's own calls see its data (so the checks below can fail).
    for (const path of ['requests', 'stubs', 'resources/customers'])
      expect(await adminText(`${path}?session=sx-a`)).toContain(MARK);
    for (const path of reads) {
      const { status, text } = await call(path);
      expect([200, 408], `${path}: ${text}`).toContain(status);
      expect(text, path).not.toContain(MARK);
      expect(text, path).not.toContain('sx-a');
    }
    const seen = async (path: string) => JSON.parse((await call(path)).text) as Record<string, unknown>;
    expect(await seen('requests/count')).toEqual({ count: 0 });
    expect(await seen('scenarios')).toEqual({ cart: 'empty' });
    expect(String((await seen('clock')).now)).toMatch(/^2026-07-01T/);
    expect(await seen('usage')).toMatchObject({ requests: 0 });
    expect((await seen('sessions')).sessions).toEqual([expect.objectContaining({ id: 'sx-b' })]);
    expect((await call('sessions/sx-a')).status).toBe(404);
  });

  test('an event stream naming sx-b carries nothing of what sx-a does meanwhile', async () => {
    const res = await request(`${serve.url}/__mockapi/events?session=sx-b`);
    const reader = res.body[Symbol.asyncIterator]();
    let text = '';
    const until = async (pattern: RegExp) => {
      while (!pattern.test(text)) text += String((await reader.next()).value);
    };
    await until(/: mockapi events/);
    await mock(serve.url, 'GET', `/mock/plain?mark=${MARK}`, { headers: { 'x-api-key': KEY, ...inSession('sx-a') } });
    await admin(serve.url, 'POST', 'usage?session=sx-a', { requests: 5 });
    await mock(serve.url, 'GET', '/mock/plain?mark=sx-b-own', { headers: { 'x-api-key': KEY, ...inSession('sx-b') } });
    await until(/sx-b-own/);
    expect(text).not.toContain(MARK);
    // Held open, the stream keeps its session in use; once the reader goes, it no longer does.
    expect((await admin(serve.url, 'GET', 'sessions/sx-b')).body.open).toBe(1);
    res.body.destroy();
    await expect.poll(async () => (await admin(serve.url, 'GET', 'sessions/sx-b')).body.open).toBe(0);
  });

  test('writes naming sx-b leave sx-a as it was', async () => {
    await admin(serve.url, 'POST', 'reset?session=sx-b', {});
    await admin(serve.url, 'DELETE', 'requests?session=sx-b');
    await admin(serve.url, 'DELETE', 'stubs?session=sx-b');
    expect((await admin(serve.url, 'DELETE', `stubs/${MARK}?session=sx-b`)).status).toBe(404);
    expect(await adminText('stubs?session=sx-a')).toContain(MARK);
    expect((await admin(serve.url, 'GET', 'scenarios?session=sx-a')).body).toEqual({ cart: 'full' });
    expect((await admin(serve.url, 'GET', 'usage?session=sx-a')).body).toMatchObject({ requests: 5 });
  });
});
