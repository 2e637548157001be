// The proxy's own 502/504 answers (unreachable, bad certificate, timeout) reshaped by `errors:`
// (`upstreamUnreachable`, `upstreamTimeout`) like mockapi's other own answers; unchanged without them.
import { afterAll, describe, expect, it } from 'vitest';
import { startServe, useTempDir, writeConfig } from '../helpers/cli.js';
import { mock } from '../helpers/control.js';
import { makeTestCa, NO_PROXY_ENV, startHttpsUpstream, startUpstream, type Upstream } from '../helpers/upstream.js';

const KEY = 'mk_upstreamErrors000000000000000001';
const dir = useTempDir('mockapi-upstream-errors-');
const ups: Upstream[] = [];
const hung: Array<() => void> = [];
afterAll(async () => {
  hung.forEach((end) => end());
  await Promise.all(ups.map((u) => u.close()));
});

const TEMPLATES = `errors:
  upstreamUnreachable:
    status: 503
    headers: { x-error-kind: unreachable }
    body: { error: { type: api_connection_error, message: "Upstream down: \${error.message}", path: "\${error.path}" } }
  upstreamTimeout:
    body: { error: { type: timeout, method: "\${error.method}", key: "\${key.name}" } }
`;

const config = (url: string, extra = '') => `apiKey: ${KEY}
server: { basePath: /v1 }
upstream:
  url: ${url}
  timeout: 300ms
  fallthrough: true
${extra}endpoints: []
`;

/** A URL nothing listens on: an upstream closed at once. */
async function closedUrl(): Promise<string> {
  const up = await startUpstream((_req, res) => res.end());
  await up.close();
  return up.url;
}

async function ask(cfg: string, path = '/v1/orders/7?x=1') {
  await writeConfig(dir.path, cfg);
  const s = await startServe(['-c', 'mockapi.yaml', '--no-state'], { cwd: dir.path, env: { ...NO_PROXY_ENV } });
  try {
    return await mock(s.url, 'GET', path, { headers: { 'x-api-key': KEY } });
  } finally {
    await s.stop();
  }
}

describe('errors: reshapes the proxy 502 and 504', () => {
  it('upstreamUnreachable reshapes the 502 of an upstream that cannot be reached; the default stays byte-identical', async () => {
    const url = await closedUrl();
    const port = new URL(url).port;
    const message = `${url} could not be reached: connect ECONNREFUSED 127.0.0.1:${port} (ECONNREFUSED)`;

    const plain = await ask(config(url));
    expect(plain.status).toBe(502);
    expect(plain.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(plain.text).toBe(JSON.stringify({ error: 'upstream_unreachable', message }));
    // A config whose errors: leaves the upstream kinds out: the same bytes.
    const other = await ask(config(url, 'errors:\n  notFound: { status: 418 }\n'));
    expect([other.status, other.headers['content-type'], other.text]).toEqual([
      502,
      plain.headers['content-type'],
      plain.text,
    ]);

    const shaped = await ask(config(url, TEMPLATES));
    expect(shaped.status).toBe(503);
    expect(shaped.headers['x-error-kind']).toBe('unreachable');
    expect(shaped.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(shaped.text).toBe(
      JSON.stringify({
        error: { type: 'api_connection_error', message: `Upstream down: ${message}`, path: '/orders/7' },
      }),
    );
  });

  it('upstreamUnreachable also reshapes the 502 of a certificate that cannot be verified', async () => {
    const tls = makeTestCa(dir.path);
    const up = await startHttpsUpstream(tls, (_req, res) => res.end('secure'));
    ups.push(up);
    const shaped = await ask(config(up.url, TEMPLATES));
    expect(shaped.status).toBe(503);
    expect(shaped.headers['x-error-kind']).toBe('unreachable');
    expect(JSON.parse(shaped.text).error.message).toMatch(
      /^Upstream down: https:\/\/127\.0\.0\.1:\d+ could not be reached: .+/,
    );
    expect(up.seen).toHaveLength(0);
  });

  it('upstreamTimeout reshapes the 504 past upstream.timeout (status kept when the template sets none)', async () => {
    const up = await startUpstream((_req, res) => hung.push(() => res.end()));
    ups.push(up);
    const plain = await ask(config(up.url));
    expect(plain.status).toBe(504);
    expect(plain.text).toBe(
      JSON.stringify({ error: 'upstream_timeout', message: `${up.url} did not answer within 300 ms` }),
    );

    const shaped = await ask(config(up.url, TEMPLATES), '/v1/slow');
    expect(shaped.status).toBe(504);
    expect(shaped.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(shaped.text).toBe(JSON.stringify({ error: { type: 'timeout', method: 'GET', key: 'default' } }));
  });
});
