// `serve --upstream` and `upstream:` fall-through: the auth rule (the mock's key in, the upstream's
// key out, never crossing), limits, the journal, HTTPS with a test CA, certificate errors, proxies.
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startServe, useTempDir, writeConfig } from '../helpers/cli.js';
import { admin, mock } from '../helpers/control.js';
import { makeTestCa, NO_PROXY_ENV, startHttpsUpstream, startUpstream, type Upstream } from '../helpers/upstream.js';

const KEY = 'mk_proxyTest0000000000000000000001';
const UP_KEY = 'upstream-secret-Zq81xv';
const dir = useTempDir('mockapi-proxy-');
const ups: Upstream[] = [];
afterAll(async () => {
  await Promise.all(ups.map((u) => u.close()));
});

async function echoUpstream(): Promise<Upstream> {
  const up = await startUpstream((req, res) => {
    if (req.url.startsWith('/echo-key')) {
      // An upstream that echoes its credential: it must not reach the client.
      res.writeHead(200, { 'content-type': 'application/json', 'x-seen-auth': String(req.headers.authorization) });
      return res.end(JSON.stringify({ auth: req.headers.authorization }));
    }
    if (req.url.startsWith('/echo-encoded')) {
      // The same credential written as JSON escapes and as base64: still the key.
      const key = String(req.headers.authorization).replace(/^Bearer /, '');
      const escaped = [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(`{"escaped":"${escaped}","base64":"${Buffer.from(key).toString('base64')}"}`);
    }
    res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' });
    res.end(JSON.stringify({ method: req.method, url: req.url, body: req.body.toString('utf8') }));
  });
  ups.push(up);
  return up;
}

const config = (extra = '') => `apiKey: ${KEY}
upstream:
  url: http://placeholder.invalid
  auth: { header: Authorization, value: "Bearer \${env.MOCKAPI_UP_KEY}" }
  headers: { Api-Version: "2026-10-29" }
${extra}endpoints:
  - method: GET
    path: /local
    response: { body: { local: true } }
`;

describe('serve --upstream', () => {
  it('sends unmatched requests upstream with the upstream key only, and answers matched ones itself', async () => {
    const up = await echoUpstream();
    await writeConfig(dir.path, config());
    const s = await startServe(['-c', 'mockapi.yaml', '--no-state', '--upstream', up.url], {
      cwd: dir.path,
      env: { ...NO_PROXY_ENV, MOCKAPI_UP_KEY: UP_KEY },
    });
    const viaBearer = await mock(s.url, 'POST', `/mock/v1/things?x=1`, {
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', cookie: 'sid=abc' },
      body: '{"a":1}',
    });
    expect(viaBearer.status).toBe(200);
    expect(JSON.parse(viaBearer.text)).toEqual({ method: 'POST', url: '/v1/things?x=1', body: '{"a":1}' });
    expect(viaBearer.headers['x-upstream']).toBe('yes');
    // A header named like a field every object inherits goes up as sent.
    const viaHeader = await mock(s.url, 'GET', `/mock/v1/other`, { headers: { 'x-api-key': KEY, constructor: 'c1' } });
    expect(viaHeader.status).toBe(200);
    const local = await mock(s.url, 'GET', '/mock/local', { headers: { 'x-api-key': KEY } });
    expect(JSON.parse(local.text)).toEqual({ local: true });

    expect(up.seen).toHaveLength(2);
    for (const seen of up.seen) {
      expect(seen.headers.authorization).toBe(`Bearer ${UP_KEY}`);
      expect(seen.headers['x-api-key']).toBeUndefined();
      expect(seen.headers['api-version']).toBe('2026-10-29');
      expect(JSON.stringify(seen.rawHeaders) + seen.url + seen.body.toString()).not.toContain(KEY);
    }
    expect(Object.hasOwn(up.seen[1]!.headers, 'constructor') && up.seen[1]!.headers.constructor).toBe('c1');
    const entries = (await admin(s.url, 'GET', 'requests?step=upstream')).body.requests;
    expect(
      entries.map((e: { path: string; status: number; endpoint: unknown }) => [e.path, e.status, e.endpoint]),
    ).toEqual([
      ['/mock/v1/things', 200, null],
      ['/mock/v1/other', 200, null],
    ]);
    expect(await s.stop()).toBe(0);
    expect(s.stdout() + s.stderr()).not.toContain(UP_KEY);
  });

  it('sends the path after server.basePath, and not the places auth.accept reads the mock key from', async () => {
    const up = await echoUpstream();
    await writeConfig(
      dir.path,
      config(`server: { basePath: /v1 }\nauth:\n  accept: [{ header: X-Shop-Token }, { query: api_key }]\n`),
    );
    const s = await startServe(['-c', 'mockapi.yaml', '--no-state', '--upstream', up.url], {
      cwd: dir.path,
      env: { ...NO_PROXY_ENV, MOCKAPI_UP_KEY: UP_KEY },
    });
    try {
      const viaQuery = await mock(s.url, 'GET', `/v1/things?a=1&api_key=${KEY}&b=2`);
      expect(viaQuery.status).toBe(200);
      expect(JSON.parse(viaQuery.text).url).toBe('/things?a=1&b=2');
      const viaHeader = await mock(s.url, 'GET', '/v1?x=1', { headers: { 'x-shop-token': KEY } });
      expect(viaHeader.status).toBe(200);
      expect(JSON.parse(viaHeader.text).url).toBe('/?x=1');
      expect(up.seen).toHaveLength(2);
      for (const seen of up.seen) {
        expect(seen.headers['x-shop-token']).toBeUndefined();
        expect(seen.headers.authorization).toBe(`Bearer ${UP_KEY}`);
        expect(seen.url).not.toContain(KEY);
      }
    } finally {
      await s.stop();
    }
  });

  it('never lets the upstream key reach the client, the journal or the log', async () => {
    const up = await echoUpstream();
    await writeConfig(dir.path, config());
    const s = await startServe(['-c', 'mockapi.yaml', '--no-state', '--upstream', up.url, '--log', 'json'], {
      cwd: dir.path,
      env: { ...NO_PROXY_ENV, MOCKAPI_UP_KEY: UP_KEY },
    });
    const answer = await mock(s.url, 'GET', '/mock/echo-key', { headers: { 'x-api-key': KEY } });
    expect(answer.status).toBe(200);
    expect(answer.text).toBe(JSON.stringify({ auth: 'Bearer <redacted>' }));
    expect(answer.headers['x-seen-auth']).toBe('Bearer <redacted>');
    const encoded = await mock(s.url, 'GET', '/mock/echo-encoded', { headers: { 'x-api-key': KEY } });
    expect(encoded.status).toBe(200);
    expect(JSON.parse(encoded.text)).toEqual({ escaped: '<redacted>', base64: '<redacted>' });
    const journal = JSON.stringify((await admin(s.url, 'GET', 'requests')).body);
    expect(journal).not.toContain(Buffer.from(UP_KEY).toString('base64').slice(0, 12));
    expect(journal).not.toContain(UP_KEY);
    expect(await s.stop()).toBe(0);
    expect(s.stdout() + s.stderr()).not.toContain(UP_KEY);
  });

  it('checks the mock key before going upstream, and counts proxied requests towards the limits', async () => {
    const up = await echoUpstream();
    await writeConfig(dir.path, config('limits:\n  rateLimit: { requests: 2, window: 1m }\n'));
    const s = await startServe(['-c', 'mockapi.yaml', '--no-state', '--upstream', up.url], {
      cwd: dir.path,
      env: { ...NO_PROXY_ENV, MOCKAPI_UP_KEY: UP_KEY },
    });
    expect((await mock(s.url, 'GET', '/mock/a')).status).toBe(401);
    expect((await mock(s.url, 'GET', '/mock/a', { headers: { 'x-api-key': 'wrong' } })).status).toBe(401);
    const first = await mock(s.url, 'GET', '/mock/a', { headers: { 'x-api-key': KEY } });
    expect(first.status).toBe(200);
    expect(first.headers['ratelimit-remaining']).toBe('1');
    expect((await mock(s.url, 'GET', '/mock/b', { headers: { 'x-api-key': KEY } })).status).toBe(200);
    const third = await mock(s.url, 'GET', '/mock/c', { headers: { 'x-api-key': KEY } });
    expect(third.status).toBe(429);
    expect(up.seen.map((r) => r.url)).toEqual(['/a', '/b']);
    await s.stop();
  });

  it('passes the content-length of a HEAD answer through (it has no body of its own)', async () => {
    const up = await startUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '11' });
      res.end(req.method === 'HEAD' ? undefined : 'hello world');
    });
    ups.push(up);
    await writeConfig(dir.path, config());
    const s = await startServe(['-c', 'mockapi.yaml', '--no-state', '--upstream', up.url], {
      cwd: dir.path,
      env: { ...NO_PROXY_ENV, MOCKAPI_UP_KEY: UP_KEY },
    });
    const head = await mock(s.url, 'HEAD', '/mock/file', { headers: { 'x-api-key': KEY } });
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe('11');
    expect(up.seen.map((r) => r.method)).toEqual(['HEAD']);
    await s.stop();
  });

  it('answers 502 upstream_unreachable when the upstream cannot be reached', async () => {
    const up = await echoUpstream();
    const url = up.url;
    await up.close();
    await writeConfig(dir.path, config());
    const s = await startServe(['-c', 'mockapi.yaml', '--no-state', '--upstream', url], {
      cwd: dir.path,
      env: { ...NO_PROXY_ENV, MOCKAPI_UP_KEY: UP_KEY },
    });
    const answer = await mock(s.url, 'GET', '/mock/x', { headers: { 'x-api-key': KEY } });
    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.text).error).toBe('upstream_unreachable');
    await s.stop();
  });

  it('answers 504 upstream_timeout past upstream.timeout, and 502 naming an unset MOCKAPI_* variable (never a value)', async () => {
    const hung: Array<() => void> = [];
    const up = await startUpstream((_req, res) => hung.push(() => res.end()));
    ups.push(up);
    await writeConfig(dir.path, config().replace('http://placeholder.invalid', `${up.url}\n  timeout: 300ms`));
    const s = await startServe(['-c', 'mockapi.yaml', '--no-state', '--upstream', up.url], {
      cwd: dir.path,
      env: { ...NO_PROXY_ENV, MOCKAPI_UP_KEY: UP_KEY },
    });
    const slow = await mock(s.url, 'GET', '/mock/slow', { headers: { 'x-api-key': KEY } });
    expect(slow.status).toBe(504);
    expect(JSON.parse(slow.text).error).toBe('upstream_timeout');
    hung.forEach((end) => end());
    await s.stop();
    const unset = await startServe(['-c', 'mockapi.yaml', '--no-state', '--upstream', up.url], {
      cwd: dir.path,
      env: { ...NO_PROXY_ENV },
    });
    const missing = await mock(unset.url, 'GET', '/mock/x', { headers: { 'x-api-key': KEY } });
    expect(missing.status).toBe(502);
    expect(JSON.parse(missing.text)).toEqual({
      error: 'upstream_unreachable',
      message: 'upstream.auth reads MOCKAPI_UP_KEY, which is not set in the environment',
    });
    expect(unset.stderr()).toContain(
      'upstream.auth reads MOCKAPI_UP_KEY, not set in the environment: requests sent upstream get 502 until it is',
    );
    await unset.stop();
  });

  it('does not go upstream without --upstream or fallthrough: true', async () => {
    const up = await echoUpstream();
    await writeConfig(dir.path, config().replace('http://placeholder.invalid', up.url));
    const s = await startServe(['-c', 'mockapi.yaml', '--no-state'], {
      cwd: dir.path,
      env: { ...NO_PROXY_ENV, MOCKAPI_UP_KEY: UP_KEY },
    });
    expect((await mock(s.url, 'GET', '/mock/x', { headers: { 'x-api-key': KEY } })).status).toBe(404);
    expect(up.seen).toHaveLength(0);
    await s.stop();
    await writeConfig(dir.path, config().replace('http://placeholder.invalid', `${up.url}\n  fallthrough: true`));
    const t = await startServe(['-c', 'mockapi.yaml', '--no-state'], {
      cwd: dir.path,
      env: { ...NO_PROXY_ENV, MOCKAPI_UP_KEY: UP_KEY },
    });
    expect((await mock(t.url, 'GET', '/mock/x', { headers: { 'x-api-key': KEY } })).status).toBe(200);
    await t.stop();
  });
});

describe('upstream config', () => {
  it('refuses a literal credential (in auth, in the URL, in headers), a variable not named MOCKAPI_*, and a credential header', async () => {
    await writeConfig(
      dir.path,
      `apiKey: ${KEY}
upstream:
  url: https://api.example.com
  auth: { header: Authorization, value: "Bearer sk_live_abc" }
  headers: { X-API-Key: "\${env.MOCKAPI_X}" }
`,
    );
    const literal = await runCli(['validate', '-c', 'mockapi.yaml'], { cwd: dir.path });
    expect(literal.code).toBe(1);
    expect(literal.stderr).toContain('upstream.auth.value must take the credential from the environment');
    expect(literal.stderr).toContain('upstream.headers.X-API-Key is a credential header');
    await writeConfig(
      dir.path,
      `apiKey: ${KEY}\nupstream:\n  url: https://me:pa55@api.example.com\n  headers: { X-Extra: "sk_live_51HxYzAbCdEfGhIjKlMnOp" }\n`,
    );
    const inUrl = await runCli(['validate', '-c', 'mockapi.yaml'], { cwd: dir.path });
    expect(inUrl.code).toBe(1);
    expect(inUrl.stderr).toContain('upstream.url must not carry a user or password');
    expect(inUrl.stderr).toContain('upstream.headers.X-Extra holds a Stripe key');
    await writeConfig(
      dir.path,
      `apiKey: ${KEY}\nupstream:\n  url: https://api.example.com\n  auth: { header: Authorization, value: "Bearer \${env.HOME}" }\n`,
    );
    const other = await runCli(['validate', '-c', 'mockapi.yaml'], { cwd: dir.path });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('may only read environment variables named MOCKAPI_*, got HOME');
    await writeConfig(
      dir.path,
      `apiKey: ${KEY}\nupstream:\n  url: https://api.example.com\n  auth: { header: Authorization, value: "Bearer \${env.MOCKAPI_UP_KEY}" }\n  timeout: 5s\n`,
    );
    expect((await runCli(['validate', '-c', 'mockapi.yaml'], { cwd: dir.path })).code).toBe(0);
  });
});

describe('HTTPS upstreams', () => {
  it('trusts upstream.ca, and answers 502 (never ignoring the error) for a certificate it cannot verify', async () => {
    const tls = makeTestCa(dir.path);
    const up = await startHttpsUpstream(tls, (req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`secure ${req.url}`);
    });
    ups.push(up);
    await writeConfig(dir.path, config().replace('http://placeholder.invalid', up.url));
    const untrusted = await startServe(['-c', 'mockapi.yaml', '--no-state', '--upstream', up.url], {
      cwd: dir.path,
      env: { ...NO_PROXY_ENV, MOCKAPI_UP_KEY: UP_KEY },
    });
    const refused = await mock(untrusted.url, 'GET', '/mock/x', { headers: { 'x-api-key': KEY } });
    expect(refused.status).toBe(502);
    expect(JSON.parse(refused.text).error).toBe('upstream_unreachable');
    expect(up.seen).toHaveLength(0);
    await untrusted.stop();

    await writeConfig(dir.path, config().replace('http://placeholder.invalid', `${up.url}\n  ca: ./ca.pem`));
    const trusted = await startServe(['-c', 'mockapi.yaml', '--no-state'], {
      cwd: dir.path,
      env: { ...NO_PROXY_ENV, MOCKAPI_UP_KEY: UP_KEY },
    });
    // fall-through is off: only a recording or --upstream sends requests upstream
    await trusted.stop();
    const viaFlag = await startServe(['-c', 'mockapi.yaml', '--no-state', '--upstream', up.url], {
      cwd: dir.path,
      env: { ...NO_PROXY_ENV, MOCKAPI_UP_KEY: UP_KEY },
    });
    const ok = await mock(viaFlag.url, 'GET', '/mock/x', { headers: { 'x-api-key': KEY } });
    expect(ok.status).toBe(200);
    expect(ok.text).toBe('secure /x');
    await viaFlag.stop();

    // NODE_EXTRA_CA_CERTS alone is trusted too.
    await writeConfig(dir.path, config().replace('http://placeholder.invalid', up.url));
    const viaEnv = await startServe(['-c', 'mockapi.yaml', '--no-state', '--upstream', up.url], {
      cwd: dir.path,
      env: { ...NO_PROXY_ENV, MOCKAPI_UP_KEY: UP_KEY, NODE_EXTRA_CA_CERTS: tls.caFile },
    });
    expect((await mock(viaEnv.url, 'GET', '/mock/y', { headers: { 'x-api-key': KEY } })).status).toBe(200);
    await viaEnv.stop();
  });
});

describe('HTTP(S)_PROXY', () => {
  it('goes through the proxy named by HTTP_PROXY, and not for hosts in NO_PROXY', async () => {
    const up = await echoUpstream();
    const tunnels: string[] = [];
    const proxy: Server = createServer((_req, res) => res.writeHead(405).end());
    proxy.on('connect', (req, client, head) => {
      tunnels.push(String(req.url));
      const [host, port] = String(req.url).split(':');
      const target = connect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        target.write(head);
        target.pipe(client);
        client.pipe(target);
      });
      target.on('error', () => client.destroy());
      client.on('error', () => target.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    try {
      await writeConfig(dir.path, config());
      const s = await startServe(['-c', 'mockapi.yaml', '--no-state', '--upstream', up.url], {
        cwd: dir.path,
        env: { ...NO_PROXY_ENV, HTTP_PROXY: proxyUrl, http_proxy: proxyUrl, MOCKAPI_UP_KEY: UP_KEY },
      });
      expect((await mock(s.url, 'GET', '/mock/p', { headers: { 'x-api-key': KEY } })).status).toBe(200);
      expect(tunnels).toEqual([up.url.replace('http://', '')]);
      await s.stop();
      const n = await startServe(['-c', 'mockapi.yaml', '--no-state', '--upstream', up.url], {
        cwd: dir.path,
        env: {
          ...NO_PROXY_ENV,
          HTTP_PROXY: proxyUrl,
          http_proxy: proxyUrl,
          NO_PROXY: '127.0.0.1',
          no_proxy: '127.0.0.1',
          MOCKAPI_UP_KEY: UP_KEY,
        },
      });
      expect((await mock(n.url, 'GET', '/mock/q', { headers: { 'x-api-key': KEY } })).status).toBe(200);
      expect(tunnels).toHaveLength(1);
      await n.stop();
    } finally {
      proxy.closeAllConnections();
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  });
});
