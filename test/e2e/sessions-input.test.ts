// Sessions (issue 42) at their edges, through the real CLI: ids that are not ids (400, never a
// crash), a 64 KiB baggage header, sessions.max (429 to the admin call, the default session for a
// request), sessions.ttl, sessions.byKey (a key valid in its session alone), and resources and
// idempotency keys per session.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { get as httpGet } from 'node:http';
import { Agent, request } from 'undici';
import { startServe, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin, mock } from '../helpers/control.js';

const KEY = 'mk_sessionsInput0000000000000000001';
const auth = { 'x-api-key': KEY };
const dir = useTempDir('mockapi-sessions-input-');
const json = (text: string) => JSON.parse(text) as Record<string, unknown>;

/** A GET whose path goes out as written (`..` and `%2e%2e` included: fetch and undici resolve them first). */
function asWritten(
  url: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((done, fail) => {
    const { hostname, port } = new URL(url);
    httpGet({ host: hostname, port: Number(port), path, headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk));
      res.on('end', () => done({ status: res.statusCode ?? 0, body: json(text) }));
    }).on('error', fail);
  });
}

describe('ids that are not session ids', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe([
      '-c',
      await writeConfig(
        dir.path,
        `apiKey: ${KEY}\nendpoints:\n  - { method: GET, path: /ok, response: { body: { ok: true } } }\n`,
        'ids.yaml',
      ),
      '--no-state',
    ]);
  });
  afterAll(() => serve?.stop());

  const bad = ['a/b', '..', '.', 'x'.repeat(65), 'tab\there', 'é', ''];

  test.each(bad)('X-Mockapi-Session %j is a 400 in JSON, journaled in the default session', async (id) => {
    const res = await mock(serve.url, 'GET', '/mock/ok', { headers: { ...auth, 'x-mockapi-session': id } });
    expect(res.status).toBe(400);
    expect(json(res.text)).toMatchObject({
      error: 'bad_request',
      message: expect.stringContaining('X-Mockapi-Session names no session: a session id is 1 to 64 of letters'),
    });
    const last = (await admin(serve.url, 'GET', 'requests?limit=1')).body.requests[0];
    expect([last.status, last.step]).toEqual([400, 'bad_request']);
  });

  test.each(['a%2Fb', '..', '%2e%2e', 'x'.repeat(65), '%01', '%C3%A9'])(
    'a path prefix /__session/%s/ is a 400',
    async (id) => {
      const res = await asWritten(serve.url, `/__session/${id}/mock/ok`, auth);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        error: 'bad_request',
        message: expect.stringContaining('the path prefix /__session/<id>/ names no session'),
      });
    },
  );

  test.each(['a%2Fb', '..', 'x'.repeat(65), '%01', '%0A'])(
    'a baggage entry mockapi.session=%s is a 400',
    async (id) => {
      const res = await mock(serve.url, 'GET', '/mock/ok', {
        headers: { ...auth, baggage: `other=1,mockapi.session=${id}` },
      });
      expect(res.status).toBe(400);
      expect(json(res.text)).toMatchObject({
        error: 'bad_request',
        message: expect.stringContaining('the baggage entry mockapi.session names no session'),
      });
    },
  );

  test('an admin call naming no id is a 400 in the admin API own words, not journaled', async () => {
    const before = (await admin(serve.url, 'GET', 'requests/count')).body.count as number;
    for (const path of [
      'requests?session=a%2Fb',
      `requests?session=${'x'.repeat(65)}`,
      'requests?session=%01',
      'requests?session=..',
      'requests?session=',
    ]) {
      expect(await admin(serve.url, 'GET', path)).toMatchObject({
        status: 400,
        body: { error: 'bad_request', message: expect.stringContaining('session: a session id is') },
      });
    }
    expect(await asWritten(serve.url, '/__session/../__mockapi/requests')).toMatchObject({
      status: 400,
      body: { error: 'bad_request', message: expect.stringContaining('session: a session id is') },
    });
    expect((await admin(serve.url, 'GET', 'requests', undefined, { 'x-mockapi-session': 'a/b' })).status).toBe(400);
    // The id in the path of /__mockapi/sessions/<id>, as the header, query and prefix forms: 400, not 404.
    for (const id of ['..%2f', '%C3%A9', 'x'.repeat(65), 'a%20b']) {
      for (const method of ['GET', 'DELETE'])
        expect(await admin(serve.url, method, `sessions/${id}`)).toMatchObject({
          status: 400,
          body: { error: 'bad_request', message: expect.stringContaining('a session id is') },
        });
    }
    expect((await admin(serve.url, 'GET', 'sessions/no-such-one')).status).toBe(404);
    expect((await admin(serve.url, 'GET', 'requests/count')).body.count).toBe(before);
  });

  test('a baggage header of 64 KiB is refused by the header limit (431) and the server goes on; one just under it is read to its end', async () => {
    const huge = await mock(serve.url, 'GET', '/mock/ok', {
      headers: { ...auth, baggage: `${'k=v,'.repeat(16 * 1024)}mockapi.session=far` },
    });
    expect(huge.status).toBe(431);
    // 15 KiB of other members, then the entry: found, in one pass.
    const long = await mock(serve.url, 'GET', '/mock/ok', {
      headers: { ...auth, baggage: `${'k=v;p=1,'.repeat(1700)} mockapi.session=far-away` },
    });
    expect(long.status).toBe(200);
    expect((await admin(serve.url, 'GET', 'requests/count?session=far-away')).body).toEqual({ count: 1 });
    // Members that are not key=value are skipped; a baggage without the entry is the default session.
    expect(
      (
        await mock(serve.url, 'GET', '/mock/ok', {
          headers: { ...auth, baggage: ',,;=,mockapi.sessionx=y, =mockapi.session' },
        })
      ).status,
    ).toBe(200);
    expect((await mock(serve.url, 'GET', '/mock/ok', { headers: auth })).status).toBe(200);
  });
});

describe('sessions.max', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe([
      '-c',
      await writeConfig(
        dir.path,
        `apiKey: ${KEY}\nsessions: { max: 2 }\nendpoints:\n  - { method: GET, path: /ok, response: { body: { ok: true } } }\n`,
        'max.yaml',
      ),
      '--no-state',
    ]);
  });
  afterAll(() => serve?.stop());

  test('one more is 429 too_many_sessions to the admin call, and the default session for a request (with a note)', async () => {
    expect((await admin(serve.url, 'POST', 'sessions', { id: 'm-1' })).status).toBe(201);
    expect(
      (await mock(serve.url, 'GET', '/mock/ok', { headers: { ...auth, 'x-mockapi-session': 'm-2' } })).status,
    ).toBe(200);
    expect(await admin(serve.url, 'POST', 'sessions', { id: 'm-3' })).toMatchObject({
      status: 429,
      body: {
        error: 'too_many_sessions',
        message: expect.stringContaining('there are 2 sessions already (sessions.max)'),
      },
    });
    expect(await admin(serve.url, 'GET', 'requests?session=m-3')).toMatchObject({
      status: 429,
      body: { error: 'too_many_sessions' },
    });
    expect(
      await admin(serve.url, 'POST', 'stubs?session=m-3', { endpoint: { method: 'GET', path: '/x' } }),
    ).toMatchObject({ status: 429 });
    const served = await mock(serve.url, 'GET', '/mock/ok', { headers: { ...auth, 'x-mockapi-session': 'm-3' } });
    expect(served.status).toBe(200);
    const [entry] = (await admin(serve.url, 'GET', 'requests?limit=1')).body.requests;
    expect(entry.notes).toEqual([
      'session m-3 not made: sessions.max (2) sessions exist; answered in the default session',
    ]);
    expect((await admin(serve.url, 'GET', 'sessions')).body.sessions.map((s: { id: string }) => s.id)).toEqual([
      'm-1',
      'm-2',
    ]);
    // One dropped: there is room again.
    await admin(serve.url, 'DELETE', 'sessions/m-1');
    expect((await admin(serve.url, 'POST', 'sessions', { id: 'm-3' })).status).toBe(201);
  });
});

describe('10,001 sessions at the default sessions.max', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe([
      '-c',
      await writeConfig(dir.path, `apiKey: ${KEY}\nendpoints: []\n`, 'many.yaml'),
      '--no-state',
    ]);
  });
  afterAll(() => serve?.stop());

  test('the 10,001st is 429; the server answers on', async () => {
    const agent = new Agent({ connections: 16, pipelining: 1 });
    const create = (id: string) =>
      request(`${serve.url}/__mockapi/sessions`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id }),
      }).then(async (res) => (await res.body.dump(), res.statusCode));
    for (let start = 0; start < 10_000; start += 500) {
      const statuses = await Promise.all(Array.from({ length: 500 }, (_, i) => create(`many-${start + i}`)));
      expect(statuses.filter((s) => s !== 201)).toEqual([]);
    }
    expect(await create('many-10000')).toBe(429);
    const list = await admin(serve.url, 'GET', 'sessions');
    expect([list.body.sessions.length, list.body.max]).toEqual([10_000, 10_000]);
    expect((await admin(serve.url, 'GET', 'usage')).status).toBe(200);
    await agent.close();
  }, 120_000);
});

describe('sessions.ttl', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe([
      '-c',
      await writeConfig(dir.path, `apiKey: ${KEY}\nsessions: { ttl: 300ms }\nendpoints: []\n`, 'ttl.yaml'),
      '--no-state',
    ]);
  });
  afterAll(() => serve?.stop());

  test('a session idle for the ttl is dropped, with its stubs', async () => {
    await admin(serve.url, 'POST', 'stubs?session=t-idle', { endpoint: { method: 'GET', path: '/x' } });
    expect((await admin(serve.url, 'GET', 'sessions')).body.sessions.map((s: { id: string }) => s.id)).toEqual([
      't-idle',
    ]);
    await waitFor(
      async () => ((await admin(serve.url, 'GET', 'sessions')).body.sessions.length === 0 ? true : undefined),
      10_000,
      50,
    );
    expect((await admin(serve.url, 'GET', 'stubs?session=t-idle')).body).toEqual({ stubs: [] });
  });
});

describe('sessions.byKey', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    const config = `apiKey: ${KEY}\nsessions: { byKey: true }\nendpoints:\n  - { method: GET, path: /ok, response: { body: { ok: true } } }\n`;
    serve = await startServe(['-c', await writeConfig(dir.path, config, 'bykey.yaml'), '--no-state']);
  });
  afterAll(() => serve?.stop());

  test('POST gives a key valid in its session alone; a request with it is in that session without naming it', async () => {
    const a = (await admin(serve.url, 'POST', 'sessions', { id: 'k-a' })).body as { key: string };
    const b = (await admin(serve.url, 'POST', 'sessions', { id: 'k-b' })).body as { key: string };
    expect(a.key).toMatch(/^mk_[A-Za-z0-9]{32}$/);
    expect(b.key).not.toBe(a.key);
    await admin(serve.url, 'POST', 'stubs?session=k-a', {
      endpoint: { method: 'GET', path: '/ok', response: { body: { in: 'k-a' } } },
    });
    expect(json((await mock(serve.url, 'GET', '/mock/ok', { headers: { 'x-api-key': a.key } })).text)).toEqual({
      in: 'k-a',
    });
    expect(
      json((await mock(serve.url, 'GET', '/mock/ok', { headers: { authorization: `Bearer ${a.key}` } })).text),
    ).toEqual({ in: 'k-a' });
    // Refused in every other session, and in the default one it is no key of the config.
    expect(
      (await mock(serve.url, 'GET', '/mock/ok', { headers: { 'x-api-key': a.key, 'x-mockapi-session': 'k-b' } }))
        .status,
    ).toBe(401);
    expect((await mock(serve.url, 'GET', '/__session/k-b/mock/ok', { headers: { 'x-api-key': a.key } })).status).toBe(
      401,
    );
    // The config's key works everywhere; with no session named it is the default session.
    expect(json((await mock(serve.url, 'GET', '/mock/ok', { headers: auth })).text)).toEqual({ ok: true });
    expect(
      json((await mock(serve.url, 'GET', '/mock/ok', { headers: { ...auth, 'x-mockapi-session': 'k-a' } })).text),
    ).toEqual({ in: 'k-a' });
    // The key is never shown again nor journaled.
    const entries = (await admin(serve.url, 'GET', 'requests?session=k-a')).body.requests as {
      headers: Record<string, string>;
      credential: { key: string };
    }[];
    expect(entries.map((e) => [e.headers['x-api-key'] ?? e.headers.authorization, e.credential.key])).toEqual([
      ['<redacted>', 'current'],
      ['<redacted>', 'current'],
      ['<redacted>', 'current'],
    ]);
    expect(JSON.stringify((await admin(serve.url, 'GET', 'sessions')).body)).not.toContain(a.key);
    // Dropped with its session.
    await admin(serve.url, 'DELETE', 'sessions/k-a');
    expect((await mock(serve.url, 'GET', '/mock/ok', { headers: { 'x-api-key': a.key } })).status).toBe(401);
  });

  test("a session's key is scrubbed wherever a request holds it — path, body, other headers, Basic — from the log and the journal", async () => {
    const { key } = (await admin(serve.url, 'POST', 'sessions', { id: 'k-leak' })).body as { key: string };
    const basic = Buffer.from(`${key}:`).toString('base64');
    await mock(serve.url, 'POST', `/mock/x/${key}`, {
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'x-other': `Basic ${basic}` },
      body: JSON.stringify({ a: key }),
    });
    const journal = JSON.stringify((await admin(serve.url, 'GET', 'requests?session=k-leak')).body);
    expect(journal).toContain('<redacted>');
    expect(journal).not.toContain(key);
    expect(journal).not.toContain(basic.slice(0, 24));
    await expect.poll(() => serve.stdout()).toContain('/mock/x/');
    expect(serve.stdout() + serve.stderr()).not.toContain(key);
  });
});

describe('resources and idempotency keys per session', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    const config = `apiKey: ${KEY}
idempotency: { header: Idempotency-Key, ttl: 24h }
resources:
  customers:
    style: stripe
    path: /v1/customers
    fields: { object: customer, email: null }
    seed:
      - { id: cus_seed, email: seed@example.com }
  intents:
    style: stripe
    path: /v1/intents
    fields: { object: intent, status: processing }
    lifecycle:
      - { from: processing, after: 2s, to: succeeded }
`;
    serve = await startServe([
      '-c',
      await writeConfig(dir.path, config, 'resources.yaml'),
      '--no-state',
      '--clock',
      '2026-05-01T00:00:00Z',
    ]);
  });
  afterAll(() => serve?.stop());

  const post = (path: string, session: string, body: string, key?: string) =>
    mock(serve.url, 'POST', path, {
      headers: {
        ...auth,
        'x-mockapi-session': session,
        'content-type': 'application/x-www-form-urlencoded',
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
      body,
    });
  const list = async (session: string) =>
    (
      json(
        (
          await mock(serve.url, 'GET', '/mock/v1/customers', {
            headers: { ...auth, ...(session === '' ? {} : { 'x-mockapi-session': session }) },
          })
        ).text,
      ).data as { id: string; email: string }[]
    ).map((c) => c.email);

  test('what one session creates, another never sees; each starts from the seed', async () => {
    expect((await post('/mock/v1/customers', 'r-a', 'email=a%40example.com')).status).toBe(200);
    expect(await list('r-a')).toEqual(['a@example.com', 'seed@example.com']);
    expect(await list('r-b')).toEqual(['seed@example.com']);
    expect(await list('')).toEqual(['seed@example.com']);
    const seen = await admin(serve.url, 'GET', 'resources/customers?session=r-a');
    expect(
      seen.body.objects?.map((o: { email: string }) => o.email),
      JSON.stringify(seen.body),
    ).toEqual(['seed@example.com', 'a@example.com']);
  });

  test('an idempotency key of one session replays there only', async () => {
    const first = json((await post('/mock/v1/customers', 'i-a', 'email=x%40example.com', 'key-1')).text);
    const again = await post('/mock/v1/customers', 'i-a', 'email=x%40example.com', 'key-1');
    expect([json(again.text).id, again.headers['idempotent-replayed']]).toEqual([first.id, 'true']);
    const elsewhere = await post('/mock/v1/customers', 'i-b', 'email=x%40example.com', 'key-1');
    expect(elsewhere.headers['idempotent-replayed']).toBeUndefined();
    expect(await list('i-b')).toEqual(['x@example.com', 'seed@example.com']);
  });

  test("a lifecycle moves on its session's clock", async () => {
    const made = json((await post('/mock/v1/intents', 'lc-a', '')).text) as { id: string; status: string };
    const made2 = json((await post('/mock/v1/intents', 'lc-b', '')).text) as { id: string; status: string };
    expect([made.status, made2.status]).toEqual(['processing', 'processing']);
    await admin(serve.url, 'POST', 'clock?session=lc-a', { advance: '3s' });
    const status = async (session: string, id: string) =>
      json(
        (await mock(serve.url, 'GET', `/mock/v1/intents/${id}`, { headers: { ...auth, 'x-mockapi-session': session } }))
          .text,
      ).status;
    expect(await status('lc-a', made.id)).toBe('succeeded');
    expect(await status('lc-b', made2.id)).toBe('processing');
    expect((await admin(serve.url, 'GET', `resources/intents/${made.id}?session=lc-a`)).body.status).toBe('succeeded');
  });

  test('a session dropped takes its objects with it', async () => {
    await post('/mock/v1/customers', 'r-gone', 'email=gone%40example.com');
    await admin(serve.url, 'DELETE', 'sessions/r-gone');
    expect(await list('r-gone')).toEqual(['seed@example.com']);
  });
});

describe('serve --workers', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe([
      '-c',
      await writeConfig(
        dir.path,
        `apiKey: ${KEY}\nendpoints:\n  - { method: GET, path: /ok, response: { body: { ok: true } } }\n`,
        'workers.yaml',
      ),
      '--workers',
      '2',
      '--no-state',
      '--log',
      'off',
    ]);
  });
  afterAll(() => serve?.stop('SIGTERM'));

  test('named sessions are refused in words (each worker would hold a part of one); the default session answers as before', async () => {
    const named = await mock(serve.url, 'GET', '/mock/ok', { headers: { ...auth, 'x-mockapi-session': 'w' } });
    expect([named.status, json(named.text).message]).toEqual([
      400,
      'named sessions need a single process: serve without --workers (the default session works as before)',
    ]);
    expect((await mock(serve.url, 'GET', '/__session/w/mock/ok', { headers: auth })).status).toBe(400);
    expect(await admin(serve.url, 'GET', 'requests?session=w')).toMatchObject({
      status: 409,
      body: { error: 'sessions_unavailable' },
    });
    expect(await admin(serve.url, 'POST', 'sessions', {})).toMatchObject({
      status: 409,
      body: { error: 'sessions_unavailable' },
    });
    expect(json((await mock(serve.url, 'GET', '/mock/ok', { headers: auth })).text)).toEqual({ ok: true });
  });
});
