// Black-box tests of `keys:` together with the look-alike fields: a key of `keys:` read from any
// place `auth.accept` lists, named by `errors:` templates (`key.name`, `key.masked`) and by the
// journal, and hidden from the journal and the log wherever it came from. The built CLI on port 0.
import { afterAll, describe, expect, test } from 'vitest';
import { startServe, stopAll, tempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';

const DEFAULT = 'mk_keysLookalikeDefault0123456789ab';
const CI = 'sk_test_ci_lookalike_0123456789wxyz';
afterAll(stopAll);

async function serve(yaml: string[]): Promise<ServeProcess> {
  const dir = await tempDir('mockapi-keys-lookalike-');
  const config = [
    `apiKey: ${DEFAULT}`,
    'keys:',
    '  - name: ci',
    `    key: ${CI}`,
    '    plan: tiny',
    'plans:',
    '  tiny: { rateLimit: { requests: 1, window: 1m } }',
    'limits: { rateLimit: { requests: 5, window: 1m } }',
    ...yaml,
    'endpoints:',
    '  - method: GET',
    '    path: /a',
    '    response: { body: { ok: true } }',
    '',
  ];
  return startServe(['-c', await writeConfig(dir, config.join('\n')), '--no-state', '--no-watch', '--log', 'json']);
}

async function call(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { headers });
  return { status: res.status, body: await res.text() };
}

interface Entry {
  query: Record<string, string>;
  headers: Record<string, string>;
  credential: { via: string; name?: string; key: string; keyName?: string };
}

async function journal(proc: ServeProcess, count: number): Promise<{ entries: Entry[]; text: string }> {
  return waitFor(async () => {
    const text = await (await fetch(`${proc.url}/__mockapi/requests`)).text();
    const { requests } = JSON.parse(text) as { requests: Entry[] };
    return requests.length >= count ? { entries: requests, text } : undefined;
  });
}

describe('keys of keys: with auth.accept', () => {
  test('a key of keys: is accepted in every place auth.accept lists, and only there, and limited by its plan', async () => {
    const proc = await serve(['auth: { accept: [{ query: api_key }, { header: X-Shop-Token }] }']);
    expect(await call(`${proc.mock}/a?api_key=${CI}`)).toEqual({ status: 200, body: '{"ok":true}' });
    // Its plan allows one request a minute, whatever place the key comes from.
    expect((await call(`${proc.mock}/a`, { 'x-shop-token': CI })).status).toBe(429);
    // apiKey keeps its own window (limits: 5 a minute).
    expect((await call(`${proc.mock}/a`, { 'x-shop-token': DEFAULT })).status).toBe(200);
    // Bearer is not a listed place: the key there is no key at all.
    expect(await call(`${proc.mock}/a`, { authorization: `Bearer ${CI}` })).toEqual({
      status: 401,
      body: '{"error":"Unauthorized","message":"No API key provided"}',
    });

    const { entries, text } = await journal(proc, 4);
    expect(entries.map((e) => e.credential)).toEqual([
      { via: 'query', name: 'api_key', key: 'current', keyName: 'ci' },
      { via: 'header', name: 'X-Shop-Token', key: 'current', keyName: 'ci' },
      { via: 'header', name: 'X-Shop-Token', key: 'current', keyName: 'default' },
      { via: 'none', key: 'unknown' },
    ]);
    expect(entries[0]!.query).toEqual({ api_key: '<redacted>' });
    expect(entries[1]!.headers['x-shop-token']).toBe('<redacted>');
    expect(text).not.toContain(CI);
    expect(text).not.toContain(DEFAULT);
    expect(proc.stdout() + proc.stderr()).not.toContain(CI);
  });

  test('errors: templates name the key that was sent (key.name) and mask it (key.masked)', async () => {
    const proc = await serve([
      'auth: { accept: [{ scheme: Token }] }',
      'errors:',
      '  rateLimited:',
      '    body: { key: "${key.name}", masked: "${key.masked}" }',
      '  invalidKey:',
      '    body: { key: "${key.name}", masked: "${key.masked}" }',
    ]);
    expect((await call(`${proc.mock}/a`, { authorization: `Token ${CI}` })).status).toBe(200);
    expect(await call(`${proc.mock}/a`, { authorization: `token ${CI}` })).toEqual({
      status: 429,
      body: '{"key":"ci","masked":"…wxyz"}',
    });
    // A wrong key has no name (null); it is still masked.
    expect(await call(`${proc.mock}/a`, { authorization: 'Token sk_wrong_0123456789abcd' })).toEqual({
      status: 401,
      body: '{"key":null,"masked":"…abcd"}',
    });
    const { text } = await journal(proc, 3);
    expect(text).not.toContain(CI);
  });
});
