// Papercuts a newcomer met on the request path (issue 45, phase 2), each through the built CLI: a
// Retry-After given to one key never makes another key's requests early retries; a run-time stub
// written with the base path is refused, naming it; a 401 for a key sent where the config does not
// read one says where it was found and how to accept it; the default answer of `enforce` names its
// first problem in a `message`.
import { afterAll, describe, expect, test } from 'vitest';
import { startServe, stopAll, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';

afterAll(stopAll);

const KEY = 'mk_requestPathNewcomer0000000000001';
const CI = 'sk_test_ci_requestPathNewcomer00002';
const dir = useTempDir('mockapi-request-path-', { each: true });

async function serve(yaml: string, extra: string[] = []): Promise<ServeProcess> {
  return startServe(
    [
      '-c',
      await writeConfig(dir.path, `apiKey: ${KEY}\n${yaml}`),
      '--no-state',
      '--no-watch',
      '--log',
      'json',
      ...extra,
    ],
    { cwd: dir.path },
  );
}

interface Entry {
  path: string;
  status: number;
  step: string;
  notes: string[];
  credential: { via: string; keyName?: string };
}

async function journal(s: ServeProcess): Promise<Entry[]> {
  return ((await (await fetch(`${s.url}/__mockapi/requests`)).json()) as { requests: Entry[] }).requests;
}

function logNotes(s: ServeProcess): string[] {
  return s
    .stdout()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => (JSON.parse(l) as { note?: string }).note ?? '');
}

describe('early retries are told apart by the key sent', () => {
  test(
    'a 429 given to one key does not make the next requests of another key early retries',
    { timeout: 20_000 },
    async () => {
      const s = await serve(
        `keys:\n  - { name: ci, key: ${CI} }\nlimits:\n  rateLimit: { requests: 1, window: 1m }\nendpoints:\n  - { method: GET, path: /x }\n`,
      );
      const call = (key: string) =>
        fetch(`${s.mock}/x`, { headers: { 'x-api-key': key } }).then(async (r) => (await r.arrayBuffer(), r.status));
      expect(await call(KEY)).toBe(200);
      expect(await call(KEY)).toBe(429); // the default key is told to come back in a minute
      expect(await call(CI)).toBe(200); // another key, with a window of its own: not a retry of anything
      expect(await call(CI)).toBe(429);
      expect(await call(KEY)).toBe(429); // the default key, back early: noted

      const entries = await journal(s);
      expect(entries.map((e) => [e.credential.keyName, e.status, e.notes])).toEqual([
        ['default', 200, []],
        ['default', 429, ['rate limited']],
        ['ci', 200, []],
        ['ci', 429, ['rate limited']],
        ['default', 429, ['rate limited', expect.stringMatching(/^early retry: \d+ ms before Retry-After$/)]],
      ]);
      const clients = (await (await fetch(`${s.url}/__mockapi/clients`)).json()) as Array<{
        client: string;
        requests: number;
        retryAfterGiven: number;
        earlyRetries: number;
      }>;
      expect(clients).toHaveLength(2);
      for (const c of clients) {
        expect(c.client).toMatch(/^x-api-key:[0-9a-f]{12}@(127\.0\.0\.1|::ffff:127\.0\.0\.1)$/);
        expect(c.client).not.toContain(KEY);
        expect(c.client).not.toContain(CI);
      }
      expect(clients[0]!.client).not.toBe(clients[1]!.client);
      // Most recently told last: ci, then the default key (told again by its early retry).
      expect(
        clients.map(({ requests, retryAfterGiven, earlyRetries }) => ({ requests, retryAfterGiven, earlyRetries })),
      ).toEqual([
        { requests: 1, retryAfterGiven: 1, earlyRetries: 0 },
        { requests: 2, retryAfterGiven: 2, earlyRetries: 1 },
      ]);
      expect(logNotes(s).filter((n) => n.includes('early retry'))).toHaveLength(1);
      expect(await s.stop()).toBe(0);
      expect(s.stderr()).toMatch(
        /early retries: 1 of 2 clients came back before Retry-After\n\s+x-api-key:[0-9a-f]{12}@\S+: 1 early of 2 Retry-After given/,
      );
    },
  );

  test('with auth.accept, the client names the place the key came from', async () => {
    const s = await serve(
      `auth:\n  accept: [{ query: api_key }, bearer]\nlimits:\n  rateLimit: { requests: 1, window: 1m }\nendpoints:\n  - { method: GET, path: /x }\n`,
    );
    for (const expected of [200, 429]) expect((await fetch(`${s.mock}/x?api_key=${KEY}`)).status).toBe(expected);
    const clients = (await (await fetch(`${s.url}/__mockapi/clients`)).json()) as Array<{ client: string }>;
    expect(clients.map((c) => c.client)).toEqual([expect.stringMatching(/^query:api_key:[0-9a-f]{12}@\S+$/)]);
    await waitFor(() => logNotes(s).length === 2 || undefined);
  });
});

describe('a run-time stub written with the base path', () => {
  async function addStub(s: ServeProcess, endpoint: unknown): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${s.url}/__mockapi/stubs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ endpoint }),
    });
    return { status: res.status, body: await res.json() };
  }

  test('is refused with 400 invalid_stub naming the base path and the path meant; the path after it answers', async () => {
    const s = await serve('server: { basePath: /v1 }\nendpoints: []\n');
    expect(await addStub(s, { method: 'GET', path: '/v1/charges', response: { body: { ok: true } } })).toEqual({
      status: 400,
      body: {
        error: 'invalid_stub',
        issues: [
          {
            path: '/endpoint/path',
            message:
              'endpoint.path "/v1/charges" starts with the base path /v1: a stub\'s path comes after it, as an endpoint\'s does, so this one would answer at /v1/v1/charges; write "/charges" (it answers at /v1/charges)',
          },
        ],
      },
    });
    expect(((await (await fetch(`${s.url}/__mockapi/stubs`)).json()) as { stubs: unknown[] }).stubs).toEqual([]);
    expect((await addStub(s, { method: 'GET', path: '/charges', response: { body: { ok: true } } })).status).toBe(201);
    const res = await fetch(`${s.url}/v1/charges`, { headers: { 'x-api-key': KEY } });
    expect([res.status, await res.json()]).toEqual([200, { ok: true }]);
  });

  test('the default base path /mock too; a config whose own endpoints are written under it keeps the stub', async () => {
    const s = await serve('endpoints: []\n');
    const refused = await addStub(s, { method: 'POST', path: '/mock', response: { status: 204 } });
    expect(refused.status).toBe(400);
    expect((refused.body as { issues: Array<{ message: string }> }).issues[0]!.message).toBe(
      'endpoint.path "/mock" starts with the base path /mock: a stub\'s path comes after it, as an endpoint\'s does, so this one would answer at /mock/mock; write "/" (it answers at /mock)',
    );
    const doubled = await serve('server: { basePath: /v1 }\nendpoints:\n  - { method: GET, path: /v1/legacy }\n');
    expect((await addStub(doubled, { method: 'GET', path: '/v1/other' })).status).toBe(201);
  });
});

describe('a key sent where the config reads none', () => {
  const NO_KEY = { error: 'Unauthorized', message: 'No API key provided' };

  async function refused(
    s: ServeProcess,
    headers: Record<string, string>,
  ): Promise<{ status: number; body: unknown; note: string[] }> {
    const res = await fetch(`${s.mock}/x`, { headers });
    const body = await res.json();
    const [entry] = (await journal(s)).slice(-1);
    return { status: res.status, body, note: entry!.notes };
  }

  test('by default, `Authorization: token <key>` is the fixed 401 whose note says where the key was and how to accept it', async () => {
    const s = await serve('endpoints:\n  - { method: GET, path: /x }\n');
    const note =
      'no API key: found a key in Authorization (scheme token), which this config does not accept; add auth.accept: [x-api-key, bearer, basic, { scheme: token }] to the config';
    expect(await refused(s, { authorization: `token ${KEY}` })).toEqual({ status: 401, body: NO_KEY, note: [note] });
    await waitFor(() => logNotes(s).includes(note) || undefined);
    // Nothing sent, or a scheme without a key: the plain 401, as before.
    expect(await refused(s, {})).toEqual({ status: 401, body: NO_KEY, note: ['no API key'] });
    expect(await refused(s, { authorization: 'Token' })).toEqual({ status: 401, body: NO_KEY, note: ['no API key'] });
    expect(s.stdout()).not.toContain(KEY);
    expect(JSON.stringify(await journal(s))).not.toContain(KEY);
  });

  test('with auth.accept: X-API-Key when only bearer is read, Basic when it is not listed', async () => {
    const s = await serve('auth:\n  accept: [bearer]\nendpoints:\n  - { method: GET, path: /x }\n');
    expect(await refused(s, { 'x-api-key': KEY })).toEqual({
      status: 401,
      body: NO_KEY,
      note: [
        'no API key: found a key in the X-API-Key header, which this config does not accept; add x-api-key to auth.accept',
      ],
    });
    expect((await refused(s, { authorization: `Basic ${Buffer.from(`${KEY}:`).toString('base64')}` })).note).toEqual([
      'no API key: found a key in Authorization (scheme Basic), which this config does not accept; add basic to auth.accept',
    ]);
    expect((await refused(s, { authorization: `Token ${KEY}` })).note).toEqual([
      'no API key: found a key in Authorization (scheme Token), which this config does not accept; add { scheme: Token } to auth.accept',
    ]);
  });

  test('an errors.missingKey template may show it as error.hint', async () => {
    const s = await serve(
      'auth:\n  accept: [bearer]\nerrors:\n  missingKey:\n    body: { message: Requires authentication, hint: "${error.hint}" }\nendpoints:\n  - { method: GET, path: /x }\n',
    );
    expect((await refused(s, { authorization: `token ${KEY}` })).body).toEqual({
      message: 'Requires authentication',
      hint: 'found a key in Authorization (scheme token), which this config does not accept; add { scheme: token } to auth.accept',
    });
    expect((await refused(s, {})).body).toEqual({ message: 'Requires authentication', hint: null });
  });
});
