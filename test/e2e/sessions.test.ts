// Sessions (issue 42) through the real CLI: a request's session from X-Mockapi-Session, a baggage
// entry or a /__session/<id>/ prefix; each session with its own stubs, journal, scenario states,
// virtual clock, limit windows and month counts; admin calls that act on the session they name and
// show no other's; POST/GET/DELETE /__mockapi/sessions.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { request } from 'undici';
import { startServe, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin, mock } from '../helpers/control.js';

const KEY = 'mk_sessionsKey000000000000000000001';
const CONFIG = `apiKey: ${KEY}
limits:
  rateLimit: { requests: 3, window: 1m }
  monthlyQuota: 100
scenarios:
  cart: { initial: empty }
endpoints:
  - method: GET
    path: /users/:id
    response: { body: { id: "\${params.id}", from: config, now: "\${now}" } }
  - method: GET
    path: /cart
    responses:
      - when: { state.cart: full }
        body: { items: 1 }
      - body: { items: 0 }
`;
const dir = useTempDir('mockapi-sessions-');
let serve: ServeProcess;
const auth = { 'x-api-key': KEY };
const get = (path: string, headers: Record<string, string> = {}) =>
  mock(serve.url, 'GET', path, { headers: { ...auth, ...headers } });
const inSession = (id: string) => ({ 'x-mockapi-session': id });
const json = (text: string) => JSON.parse(text) as Record<string, unknown>;

beforeAll(async () => {
  serve = await startServe([
    '-c',
    await writeConfig(dir.path, CONFIG),
    '--no-state',
    '--clock',
    '2026-03-01T00:00:00Z',
  ]);
});
afterAll(() => serve?.stop());

describe('a request names its session', () => {
  test('by the header, a baggage entry or a path prefix; a stub of one session answers it alone', async () => {
    expect(
      (
        await admin(serve.url, 'POST', 'stubs?session=s-header', {
          endpoint: { method: 'GET', path: '/users/:id', response: { body: { from: 'header' } } },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await admin(
          serve.url,
          'POST',
          'stubs',
          { endpoint: { method: 'GET', path: '/users/:id', response: { body: { from: 'baggage' } } } },
          inSession('s-baggage'),
        )
      ).status,
    ).toBe(201);
    expect(
      (
        await mock(serve.url, 'POST', '/__session/s-prefix/__mockapi/stubs', {
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            endpoint: { method: 'GET', path: '/users/:id', response: { body: { from: 'prefix' } } },
          }),
        })
      ).status,
    ).toBe(201);

    expect(json((await get('/mock/users/1', inSession('s-header'))).text)).toEqual({ from: 'header' });
    expect(
      json((await get('/mock/users/1', { baggage: 'userId=alice, mockapi.session = s-baggage ;ttl=5, other=x' })).text),
    ).toEqual({ from: 'baggage' });
    expect(json((await get('/__session/s-prefix/mock/users/1')).text)).toEqual({ from: 'prefix' });
    // No session: the default one, which has no stub.
    expect(json((await get('/mock/users/1')).text)).toMatchObject({ id: '1', from: 'config' });
    // The header wins over the baggage entry, and both over the prefix (which is still taken off the path).
    expect(
      json(
        (
          await get('/__session/s-prefix/mock/users/1', {
            ...inSession('s-header'),
            baggage: 'mockapi.session=s-baggage',
          })
        ).text,
      ),
    ).toEqual({ from: 'header' });
    expect(
      json((await get('/mock/users/1', { baggage: 'mockapi.session=s-baggage', ...inSession('s-header') })).text),
    ).toEqual({ from: 'header' });
  });

  test("each session's journal holds its own requests, the path as the session sees it (the prefix taken off)", async () => {
    await get('/__session/j-one/mock/users/7?x=1');
    await get('/mock/users/8', inSession('j-two'));
    const one = await admin(serve.url, 'GET', 'requests?session=j-one');
    expect(one.body.requests.map((r: { path: string; query: unknown }) => [r.path, r.query])).toEqual([
      ['/mock/users/7', { x: '1' }],
    ]);
    expect(
      (await admin(serve.url, 'GET', 'requests', undefined, inSession('j-two'))).body.requests.map(
        (r: { path: string }) => r.path,
      ),
    ).toEqual(['/mock/users/8']);
    // Through the prefix, an admin call acts on that session too.
    const prefixed = await request(`${serve.url}/__session/j-two/__mockapi/requests/count`);
    expect(await prefixed.body.json()).toEqual({ count: 1 });
    const everyPath = (await admin(serve.url, 'GET', 'requests?limit=1000')).body.requests.map(
      (r: { path: string }) => r.path,
    );
    expect(everyPath).not.toContain('/mock/users/7');
    expect(everyPath).not.toContain('/mock/users/8');
  });

  test('each session has its own virtual clock, starting where --clock started', async () => {
    const now = async (headers: Record<string, string>) =>
      json((await get('/mock/users/1', headers)).text).now as string;
    expect((await admin(serve.url, 'POST', 'clock?session=c-late', { advance: '30d' })).body.now).toMatch(
      /^2026-03-31T00:00:0/,
    );
    expect(await now(inSession('c-late'))).toMatch(/^2026-03-31T/);
    expect(await now(inSession('c-early'))).toMatch(/^2026-03-01T00:00/);
    expect(await now({})).toMatch(/^2026-03-01T/);
    expect((await admin(serve.url, 'GET', 'clock?session=c-early')).body.now).toMatch(/^2026-03-01T00:00/);
    // reset (part clock) puts the session's clock back where --clock started.
    expect((await admin(serve.url, 'POST', 'reset?session=c-late', { clock: true })).status).toBe(200);
    expect(await now(inSession('c-late'))).toMatch(/^2026-03-01T00:00/);
  });

  test('each session has its own rate window and month count', async () => {
    for (let i = 0; i < 3; i++) expect((await get('/mock/users/1', inSession('l-busy'))).status).toBe(200);
    const refused = await get('/mock/users/1', inSession('l-busy'));
    expect(refused.status).toBe(429);
    expect((await get('/mock/users/1', inSession('l-idle'))).status).toBe(200);
    expect((await admin(serve.url, 'GET', 'usage?session=l-busy')).body).toMatchObject({
      requests: 3,
      rateLimit: { limit: 3, remaining: 0 },
    });
    expect((await admin(serve.url, 'GET', 'usage?session=l-idle')).body).toMatchObject({
      requests: 1,
      rateLimit: { remaining: 2 },
    });
    // The month of one session set to its quota: that session alone is refused.
    expect((await admin(serve.url, 'POST', 'usage?session=l-full', { requests: 100 })).body).toMatchObject({
      requests: 100,
      remaining: 0,
    });
    const over = await get('/mock/users/1', inSession('l-full'));
    expect([over.status, json(over.text).code]).toEqual([429, 'QUOTA_EXCEEDED']);
    expect((await get('/mock/users/1', inSession('l-idle'))).status).toBe(200);
  });

  test('each session has its own scenario states and sequences; reset acts on one session', async () => {
    expect((await admin(serve.url, 'PUT', 'scenarios/cart?session=sc-full', { state: 'full' })).body).toEqual({
      cart: 'full',
    });
    expect(json((await get('/mock/cart', inSession('sc-full'))).text)).toEqual({ items: 1 });
    expect(json((await get('/mock/cart', inSession('sc-empty'))).text)).toEqual({ items: 0 });
    expect((await admin(serve.url, 'GET', 'scenarios')).body).toEqual({ cart: 'empty' });
    await admin(serve.url, 'POST', 'stubs?session=sc-empty', {
      endpoint: { method: 'GET', path: '/x', response: { status: 204 } },
    });
    const reset = await admin(serve.url, 'POST', 'reset?session=sc-full', {});
    expect(reset.body.scenarios).toEqual({ cart: 'empty' });
    expect((await admin(serve.url, 'GET', 'requests/count?session=sc-full')).body).toEqual({ count: 0 });
    // The other session kept its journal and its stub.
    expect((await admin(serve.url, 'GET', 'requests/count?session=sc-empty')).body).toEqual({ count: 1 });
    expect((await admin(serve.url, 'GET', 'stubs?session=sc-empty')).body.stubs).toHaveLength(1);
  });
});

describe('waits and event streams see their own session only', () => {
  test("a wait in one session is not answered by another's requests", async () => {
    await admin(serve.url, 'GET', 'requests/count?session=w-mine');
    const waiting = admin(serve.url, 'GET', 'requests/wait?session=w-mine&path=/mock/users/42&count=2&timeout=20s');
    await waitFor(async () => ((await admin(serve.url, 'GET', 'sessions/w-mine')).body.open === 1 ? true : undefined));
    // Were the journals one, the other session's two requests would answer the wait.
    for (const id of ['w-other', 'w-other', 'w-mine', 'w-mine'])
      expect((await get('/mock/users/42', inSession(id))).status).toBe(200);
    const answered = await waiting;
    expect(answered.status).toBe(200);
    expect(
      answered.body.requests.map((r: { headers: Record<string, string> }) => r.headers['x-mockapi-session']),
    ).toEqual(['w-mine', 'w-mine']);
  });

  test("an event stream of one session carries its requests, not another's", async () => {
    const res = await request(`${serve.url}/__mockapi/events?session=e-mine`);
    const reader = res.body[Symbol.asyncIterator]();
    let text = '';
    const until = async (pattern: RegExp) => {
      while (!pattern.test(text)) text += String((await reader.next()).value);
    };
    await until(/: mockapi events/);
    await get('/mock/users/501', inSession('e-other'));
    await get('/mock/users/502', inSession('e-mine'));
    await until(/\/mock\/users\/502/);
    expect(text).not.toContain('/mock/users/501');
    res.body.destroy();
  });
});

describe('/__mockapi/sessions', () => {
  test('POST makes one (201: id, url with the prefix, headers); the url and headers reach it', async () => {
    const made = await admin(serve.url, 'POST', 'sessions', {});
    expect(made.status).toBe(201);
    const { id } = made.body as { id: string };
    expect(id).toMatch(/^s_[A-Za-z0-9_-]{20}$/);
    expect(made.body).toEqual({ id, url: `${serve.url}/__session/${id}`, headers: { 'X-Mockapi-Session': id } });
    await get(`${made.body.url.slice(serve.url.length)}/mock/users/1`);
    await get('/mock/users/2', made.body.headers);
    expect((await admin(serve.url, 'GET', `sessions/${id}`)).body).toMatchObject({
      id,
      requests: 2,
      stubs: 0,
      key: false,
    });
    const named = await admin(serve.url, 'POST', 'sessions', { id: 'p-named' });
    expect([named.status, named.body.id]).toEqual([201, 'p-named']);
    expect(await admin(serve.url, 'POST', 'sessions', { id: 'p-named' })).toMatchObject({
      status: 409,
      body: { error: 'session_exists' },
    });
    expect(await admin(serve.url, 'POST', 'sessions', { id: 'p/x' })).toMatchObject({
      status: 400,
      body: { error: 'bad_request' },
    });
    expect(await admin(serve.url, 'POST', 'sessions', { key: true })).toMatchObject({
      status: 400,
      body: { error: 'bad_request' },
    });
  });

  test('GET lists every session with its counts; a call naming a session sees that one alone, and no other by id', async () => {
    await admin(serve.url, 'POST', 'stubs?session=g-a', {
      endpoint: { method: 'GET', path: '/y', response: { status: 204 } },
    });
    await get('/mock/users/1', inSession('g-b'));
    const all = (await admin(serve.url, 'GET', 'sessions')).body as {
      sessions: { id: string; requests: number; stubs: number }[];
      max: number;
    };
    expect(all.max).toBe(10_000);
    expect(all.sessions.find((s) => s.id === 'g-a')).toMatchObject({
      requests: 0,
      stubs: 1,
      open: 0,
      key: false,
      created: expect.stringMatching(/Z$/),
      lastSeen: expect.stringMatching(/Z$/),
    });
    expect(all.sessions.find((s) => s.id === 'g-b')).toMatchObject({ requests: 1, stubs: 0 });
    const own = (await admin(serve.url, 'GET', 'sessions?session=g-a')).body as { sessions: { id: string }[] };
    expect(own.sessions.map((s) => s.id)).toEqual(['g-a']);
    expect(await admin(serve.url, 'GET', 'sessions/g-b?session=g-a')).toMatchObject({
      status: 404,
      body: { error: 'not_found' },
    });
    expect(await admin(serve.url, 'DELETE', 'sessions/g-b', undefined, inSession('g-a'))).toMatchObject({
      status: 404,
    });
    expect((await admin(serve.url, 'GET', 'sessions/g-b')).status).toBe(200);
  });

  test('DELETE drops a session with everything it held; naming it again starts afresh', async () => {
    await admin(serve.url, 'POST', 'stubs?session=d-one', {
      endpoint: { method: 'GET', path: '/users/:id', response: { body: { from: 'stub' } } },
    });
    expect(json((await get('/mock/users/1', inSession('d-one'))).text)).toEqual({ from: 'stub' });
    expect(await admin(serve.url, 'DELETE', 'sessions/d-one')).toMatchObject({
      status: 200,
      body: { deleted: 'd-one' },
    });
    expect(await admin(serve.url, 'DELETE', 'sessions/d-one')).toMatchObject({ status: 404 });
    expect(json((await get('/mock/users/1', inSession('d-one'))).text)).toMatchObject({ from: 'config' });
    expect((await admin(serve.url, 'GET', 'requests/count?session=d-one')).body).toEqual({ count: 1 });
  });

  test('a wait open in a session that is dropped ends with 410 session_dropped', async () => {
    await admin(serve.url, 'GET', 'requests/count?session=d-wait');
    const waiting = admin(serve.url, 'GET', 'requests/wait?session=d-wait&path=/never&timeout=20s');
    await waitFor(async () => ((await admin(serve.url, 'GET', 'sessions/d-wait')).body.open === 1 ? true : undefined));
    expect((await admin(serve.url, 'DELETE', 'sessions/d-wait')).status).toBe(200);
    expect(await waiting).toMatchObject({
      status: 410,
      body: { error: 'session_dropped', message: 'the session d-wait was dropped' },
    });
  });

  test("rotate-key naming a session is refused: the keys are every session's", async () => {
    expect(await admin(serve.url, 'POST', 'rotate-key?session=r-one', {})).toMatchObject({
      status: 409,
      body: {
        error: 'conflict',
        message: 'the keys are shared by every session: rotate a key without naming a session',
      },
    });
    expect((await get('/mock/users/1')).status).toBe(200); // the key is unchanged
  });

  test('the inspector opens for a session under its prefix or with ?session=', async () => {
    for (const path of ['/__session/i-one/__mockapi/', '/__mockapi/?session=i-one']) {
      const res = await request(`${serve.url}${path}`);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      await res.body.dump();
    }
  });
});
