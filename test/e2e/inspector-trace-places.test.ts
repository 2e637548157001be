// The inspector's "Why this answer" trace names the place of `auth.accept` a key was read from, and
// every place a missing key was looked for — never the key itself.
import { afterAll, describe, expect, test } from 'vitest';
import type { Entry, Project } from '../../src/inspector/page/api.js';
import { placeOf, traceOf } from '../../src/inspector/page/trace.js';
import { startServe, stopAll, tempDir, waitFor, writeConfig } from '../helpers/cli.js';

afterAll(stopAll);

function entry(overrides: Partial<Entry>): Entry {
  return {
    id: 1,
    time: '2026-11-23T10:00:00.000Z',
    method: 'GET',
    path: '/v1/users',
    query: {},
    headers: {},
    body: '',
    bodyTruncated: false,
    endpoint: 'GET /users',
    response: 'response',
    status: 200,
    ms: 1,
    step: 'response',
    credential: { via: 'x-api-key', key: 'current' },
    notes: [],
    ...overrides,
  };
}

describe('placeOf and traceOf', () => {
  test('each form of auth.accept in words', () => {
    expect(
      [
        { via: 'x-api-key' },
        { via: 'bearer' },
        { via: 'basic' },
        { via: 'header', name: 'X-Api-Key' },
        { via: 'query', name: 'api_key' },
        { via: 'scheme', name: 'Token' },
        { via: 'cookie', name: 'session' },
      ].map(placeOf),
    ).toEqual([
      'the X-API-Key header',
      'an Authorization: Bearer header',
      'an Authorization: Basic header',
      'the X-Api-Key header',
      'the query parameter api_key',
      'an Authorization: Token header',
      'the cookie session',
    ]);
  });

  test('a key found names its place; a missing key lists every place looked in, in order', () => {
    const accept = [
      { via: 'header', name: 'X-Api-Key' },
      { via: 'query', name: 'api_key' },
    ];
    expect(
      traceOf(
        entry({ credential: { via: 'query', name: 'api_key', key: 'current', keyName: 'ci' } }),
        undefined,
        accept,
      )[0],
    ).toBe('Auth: the current key named ci, sent in the query parameter api_key.');
    expect(
      traceOf(entry({ step: 'auth', status: 401, credential: { via: 'none', key: 'unknown' } }), undefined, accept)[0],
    ).toBe('Auth: no credential — no key in the X-Api-Key header or the query parameter api_key → 401.');
    expect(
      traceOf(
        entry({ step: 'auth', status: 401, credential: { via: 'cookie', name: 'sid', key: 'unknown' } }),
        undefined,
        accept,
      )[0],
    ).toBe('Auth: the key sent in the cookie sid is not the current key → 401 "Invalid API key".');
  });

  test('the default places keep their sentence', () => {
    const none = entry({ step: 'auth', status: 401, credential: { via: 'none', key: 'unknown' } });
    const sentence =
      'Auth: no credential — no X-API-Key, Bearer or Basic header with a value → 401 "No API key provided".';
    expect(traceOf(none, undefined)[0]).toBe(sentence);
    expect(traceOf(none, undefined, [{ via: 'x-api-key' }, { via: 'bearer' }, { via: 'basic' }])[0]).toBe(sentence);
    expect(traceOf(none, undefined, [{ via: 'bearer' }])[0]).toBe(
      'Auth: no credential — no key in an Authorization: Bearer header → 401.',
    );
  });
});

describe('the trace of journaled requests, served with auth.accept (black box: admin API)', () => {
  const KEY = 'mk_tracePlaces00000000000000000000001';
  const CI = 'ci_tracePlaces00000000000000000000002';
  const CONFIG = `apiKey: ${KEY}
server: { basePath: /v1 }
auth:
  accept: [{ header: X-Api-Key }, { query: api_key }, { cookie: sid }, { scheme: Token }]
keys:
  - { name: ci, key: ${CI} }
endpoints:
  - method: GET
    path: /users
    response: { body: [] }
`;

  test('names the place of each request, lists the places of a missing key, and never holds a key', async () => {
    const dir = await tempDir('mockapi-trace-places-');
    const proc = await startServe(['-c', await writeConfig(dir, CONFIG), '--no-state', '--no-watch', '--log', 'off'], {
      cwd: dir,
    });
    const send = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${proc.url}/v1${path}`, { headers }).then((r) => r.status);
    expect(await send('/users')).toBe(401);
    expect(await send(`/users?api_key=${CI}`)).toBe(200);
    expect(await send('/users', { cookie: 'sid=sk_notAKey0000' })).toBe(401);
    expect(await send('/users', { authorization: `Token ${KEY}` })).toBe(200);
    expect(await send('/users', { 'x-api-key': KEY })).toBe(200);

    const project = (await (await fetch(`${proc.url}/__mockapi/project`)).json()) as Project;
    expect(project.accept).toEqual([
      { via: 'header', name: 'X-Api-Key' },
      { via: 'query', name: 'api_key' },
      { via: 'cookie', name: 'sid' },
      { via: 'scheme', name: 'Token' },
    ]);
    const requests = await waitFor(async () => {
      const { requests: all } = (await (await fetch(`${proc.url}/__mockapi/requests`)).json()) as { requests: Entry[] };
      return all.length >= 5 ? all : undefined;
    });
    const traces = requests.map((e) => traceOf(e, undefined, project.accept)[0]);
    expect(traces).toEqual([
      'Auth: no credential — no key in the X-Api-Key header, the query parameter api_key, the cookie sid or an Authorization: Token header → 401.',
      'Auth: the current key named ci, sent in the query parameter api_key.',
      'Auth: the key sent in the cookie sid is not the current key → 401 "Invalid API key".',
      'Auth: the current key named default, sent in an Authorization: Token header.',
      'Auth: the current key named default, sent in the X-Api-Key header.',
    ]);
    const seen = JSON.stringify({
      requests,
      project,
      traces: requests.map((e) => traceOf(e, undefined, project.accept)),
    });
    for (const secret of [KEY, CI, 'sk_notAKey0000']) expect(seen).not.toContain(secret);
  });
});
