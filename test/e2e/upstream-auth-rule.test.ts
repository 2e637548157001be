// The auth rule of the proxy, for every `auth.accept` kind: the client's credential for the mock
// never reaches the upstream (headers, query, cookie, body), which sees only `upstream.auth`.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServe, useTempDir, writeConfig } from '../helpers/cli.js';
import { mock } from '../helpers/control.js';
import { NO_PROXY_ENV, startUpstream, type Seen, type Upstream } from '../helpers/upstream.js';

const KEY = 'mk_authRule00000000000000000000001';
const UP_KEY = 'upstream-secret-Rk20aq';
const dir = useTempDir('mockapi-auth-rule-');
let up: Upstream;
afterAll(async () => {
  await up?.close();
});

/** The upstream every test sends to: it answers `{"ok":true}` and remembers what it saw. */
async function theUpstream(): Promise<Upstream> {
  up ??= await startUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  return up;
}

/** Everything the upstream saw of one request, as one string. */
const everything = (seen: Seen) => JSON.stringify(seen.rawHeaders) + seen.url + seen.body.toString('latin1');

const basic = (user: string) => `Basic ${Buffer.from(`${user}:pw`).toString('base64')}`;

/** Each kind of `auth.accept`, and how a client presents the mock's key that way. */
const KINDS: Array<{ accept: string; headers: Record<string, string>; query?: string }> = [
  { accept: 'x-api-key', headers: { 'x-api-key': KEY } },
  { accept: 'bearer', headers: { authorization: `Bearer ${KEY}` } },
  { accept: 'basic', headers: { authorization: basic(KEY) } },
  { accept: '{ scheme: Token }', headers: { authorization: `Token ${KEY}` } },
  { accept: '{ header: X-Shop-Token }', headers: { 'x-shop-token': KEY } },
  { accept: '{ query: api_key }', headers: {}, query: `api_key=${KEY}` },
  { accept: '{ cookie: mock_session }', headers: { cookie: `theme=dark; mock_session=${KEY}; lang="en"` } },
];

describe('the proxy removes the mock key from wherever auth.accept reads it', () => {
  for (const kind of KINDS) {
    it(`auth.accept: [${kind.accept}]`, async () => {
      await theUpstream();
      await writeConfig(
        dir.path,
        `apiKey: ${KEY}
auth:
  accept: [${kind.accept}]
upstream:
  url: ${up.url}
  auth: { header: Authorization, value: "Bearer \${env.MOCKAPI_UP_KEY}" }
  fallthrough: true
endpoints: []
`,
      );
      const s = await startServe(['-c', 'mockapi.yaml', '--no-state'], {
        cwd: dir.path,
        env: { ...NO_PROXY_ENV, MOCKAPI_UP_KEY: UP_KEY },
      });
      try {
        const before = up.seen.length;
        const query = kind.query === undefined ? '?page=2' : `?page=2&${kind.query}&sort=asc`;
        const answer = await mock(s.url, 'POST', `/mock/v1/orders${query}`, {
          headers: { ...kind.headers, 'content-type': 'application/json' },
          body: '{"qty":1}',
        });
        expect(answer.status).toBe(200);
        expect(answer.text).toBe('{"ok":true}');
        expect(up.seen).toHaveLength(before + 1);
        const seen = up.seen[before]!;
        expect(everything(seen)).not.toContain(KEY);
        expect(everything(seen)).not.toContain(Buffer.from(KEY).toString('base64').slice(0, 20));
        expect(seen.headers.authorization).toBe(`Bearer ${UP_KEY}`);
        expect(seen.url).toBe(kind.query === undefined ? '/v1/orders?page=2' : '/v1/orders?page=2&sort=asc');
        expect(seen.body.toString()).toBe('{"qty":1}');
        // The other cookies go upstream exactly as sent; a Cookie with only the mock's one is not sent at all.
        expect(seen.headers.cookie).toBe(kind.accept.includes('cookie') ? 'theme=dark; lang="en"' : undefined);
      } finally {
        await s.stop();
      }
    });
  }

  it('drops a Cookie header that carried only the mock key, and the key cookie in every Cookie header', async () => {
    await theUpstream();
    await writeConfig(
      dir.path,
      `apiKey: ${KEY}
auth:
  accept: [{ cookie: sid }]
upstream:
  url: ${up.url}
  auth: { header: X-Up-Key, value: "\${env.MOCKAPI_UP_KEY}" }
  fallthrough: true
endpoints: []
`,
    );
    const s = await startServe(['-c', 'mockapi.yaml', '--no-state'], {
      cwd: dir.path,
      env: { ...NO_PROXY_ENV, MOCKAPI_UP_KEY: UP_KEY },
    });
    try {
      const before = up.seen.length;
      expect((await mock(s.url, 'GET', '/mock/a', { headers: { cookie: `sid=${KEY}` } })).status).toBe(200);
      expect(
        (await mock(s.url, 'GET', '/mock/b', { headers: { cookie: `sid=${KEY};a=1;  sid=${KEY}x` } })).status,
      ).toBe(200);
      const [only, several] = up.seen.slice(before);
      expect(only!.headers.cookie).toBeUndefined();
      expect(several!.headers.cookie).toBe('a=1');
      for (const seen of up.seen.slice(before)) {
        expect(everything(seen)).not.toContain(KEY);
        expect(seen.headers['x-up-key']).toBe(UP_KEY);
      }
    } finally {
      await s.stop();
    }
  });
});

describe('a recording never keeps the mock key', () => {
  it('never writes the auth.accept header, even when captureRequestHeaders names it and two keys were used', async () => {
    const KEY2 = 'mk_authRuleSecond0000000000000000002';
    // The upstream answers each of two callers differently: it tells them apart by X-Caller.
    const who = await startUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ caller: req.headers['x-caller'] }));
    });
    try {
      await writeConfig(
        dir.path,
        `apiKey: ${KEY}
keys:
  - { name: ci, key: ${KEY2} }
auth:
  accept: [{ header: X-Shop-Token }]
upstream:
  url: ${who.url}
recording:
  captureRequestHeaders: [x-shop-token, x-caller]
endpoints: []
`,
      );
      const s = await startServe(['-c', 'mockapi.yaml', '--no-state', '--log', 'off'], {
        cwd: dir.path,
        env: { ...NO_PROXY_ENV },
        command: 'record',
      });
      for (const [key, caller] of [
        [KEY, 'a'],
        [KEY2, 'b'],
        [KEY, 'a'],
        [KEY2, 'b'],
      ] as const) {
        expect(
          (await mock(s.url, 'GET', '/mock/v1/me', { headers: { 'x-shop-token': key, 'x-caller': caller } })).status,
        ).toBe(200);
      }
      expect(await s.stop()).toBe(0);
      const written = await readFile(join(dir.path, 'mockapi.yaml'), 'utf8');
      expect(written).toContain('recorded: GET /v1/me');
      expect(written).toContain('headers.x-caller');
      expect(written).not.toContain('headers.x-shop-token');
      expect(written.split(KEY2)).toHaveLength(2); // only under keys:
    } finally {
      await who.close();
    }
  });
});
