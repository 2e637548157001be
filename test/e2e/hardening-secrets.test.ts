// Keys never reach the request log or the journal, in any form a client sent them, through the
// real CLI and real HTTP: the path, the query (names too), a form body, \u-escaped JSON, Basic
// credentials in another header; the key served now and the one it replaced.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServe, stopAll, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin, mock } from '../helpers/control.js';

const KEY = 'mk_secretsKey00000000000000000000001';
const CONFIG = `apiKey: ${KEY}
endpoints:
  - method: GET
    path: /items/:id
    response: { body: { ok: true } }
  - method: POST
    path: /items
    response: { status: 201 }
`;
const b64 = (text: string): string => Buffer.from(text).toString('base64');
const jsonEscaped = (text: string): string =>
  [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
/** Every form of `key` these tests send: none may appear anywhere. */
const forms = (key: string): string[] => [
  key,
  key.replace('_', '%5F'),
  key.replace('_', '%5f'),
  b64(`${key}:`),
  jsonEscaped(key),
];

const dir = useTempDir('mockapi-secrets-');
let server: ServeProcess;
let config: string;
beforeAll(async () => {
  config = await writeConfig(dir.path, CONFIG);
  server = await startServe(['-c', config, '--no-state', '--log', 'json']);
});
afterAll(stopAll);

async function journal(): Promise<Array<Record<string, unknown>>> {
  return (await admin(server.url, 'GET', 'requests')).body.requests;
}

describe('the request log', () => {
  test('a key in the path, plain or percent-encoded, or in a query, is not printed', async () => {
    const sent = [
      `/mock/items/${KEY}`,
      `/mock/items/${KEY.replace('_', '%5F')}`,
      `/mock/nope/${KEY}`,
      `/mock/items/1?${KEY}=1`,
    ];
    for (const path of sent) await mock(server.url, 'GET', path, { headers: { 'x-api-key': KEY } });
    const lines = await waitFor(() => {
      const found = server
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{') && line.includes('/mock/'));
      return found.length >= sent.length ? found : undefined;
    });
    const paths = lines.slice(-sent.length).map((line) => JSON.parse(line).path);
    expect(paths).toEqual([
      '/mock/items/<redacted>',
      '/mock/items/<redacted>',
      '/mock/nope/<redacted>',
      '/mock/items/1',
    ]);
    for (const form of forms(KEY)) expect(server.stdout()).not.toContain(form);
  });
});

describe('the journal', () => {
  test('scrubs the key in a percent-encoded path, a query name, a form body, \\u-escaped JSON and Basic credentials in another header', async () => {
    await admin(server.url, 'DELETE', 'requests');
    await mock(server.url, 'GET', `/mock/items/${KEY.replace('_', '%5F')}?${encodeURIComponent(KEY)}=1`, {
      headers: { 'x-api-key': KEY, 'x-forwarded-authorization': `Basic ${b64(`${KEY}:`)}`, [`x-${KEY}`]: 'v' },
    });
    await mock(server.url, 'POST', '/mock/items', {
      headers: { 'x-api-key': KEY, 'content-type': 'application/x-www-form-urlencoded' },
      body: `user=ann&key=${KEY.replace('_', '%5F')}`,
    });
    await mock(server.url, 'POST', '/mock/items', {
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: `{"key":"${jsonEscaped(KEY)}"}`,
    });
    const [get, form, json] = await journal();
    expect(get).toMatchObject({ path: '/mock/items/<redacted>', query: { '<redacted>': '1' } });
    expect(get?.headers).toMatchObject({ 'x-forwarded-authorization': 'Basic <redacted>', 'x-<redacted>': 'v' });
    expect(form?.body).toBe('user=ann&key=<redacted>');
    expect(json?.body).toBe('{"key":"<redacted>"}');
    const text = JSON.stringify(await journal());
    for (const form of forms(KEY)) expect(text).not.toContain(form);
  });

  test('after a rotation, the previous key is scrubbed as well as the new one', async () => {
    const { body } = await admin(server.url, 'POST', 'rotate-key', {});
    const next = body.key as string;
    expect(next).not.toBe(KEY);
    await admin(server.url, 'DELETE', 'requests');
    await mock(server.url, 'POST', '/mock/items', {
      headers: { 'x-api-key': next, 'content-type': 'text/plain' },
      body: `old ${KEY} new ${next}`,
    });
    const [entry] = await journal();
    expect(entry).toMatchObject({
      body: 'old <redacted> new <redacted>',
      credential: { via: 'x-api-key', key: 'current' },
    });
    for (const form of [...forms(KEY), ...forms(next)]) expect(server.stdout()).not.toContain(form);
  });
});
