// Rules of the look-alike contract that the other look-alike tests leave out: the storeUnavailable
// template (with a shared store that cannot be reached), and error.path read after a base path
// other than /mock. The real CLI on port 0, exact statuses, headers and bodies.
import { afterAll, describe, expect, test } from 'vitest';
import { startServe, stopAll, tempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_lookalikeRules0000000000000000001';
afterAll(stopAll);

async function serve(yaml: string): Promise<ServeProcess> {
  const dir = await tempDir('mockapi-lookalike-rules-');
  return startServe(
    ['-c', await writeConfig(dir, `apiKey: ${KEY}\n${yaml}`), '--no-state', '--no-watch', '--log', 'off'],
    { cwd: dir },
  );
}

describe('errors: under a base path of its own', () => {
  test('error.path is the path after the base path, without the query', async () => {
    const proc = await serve(`server: { basePath: /v1 }
errors:
  notFound:
    body: { error: { type: invalid_request_error, message: "Unrecognized request URL (\${error.method}: /v1\${error.path})." } }
endpoints:
  - { method: GET, path: /customers }
`);
    const res = await fetch(`${proc.url}/v1/charges/ch_1?expand=x`, { headers: { authorization: `Bearer ${KEY}` } });
    expect([res.status, res.headers.get('content-type'), await res.text()]).toEqual([
      404,
      'application/json; charset=utf-8',
      '{"error":{"type":"invalid_request_error","message":"Unrecognized request URL (GET: /v1/charges/ch_1)."}}',
    ]);
  });
});

describe('errors.storeUnavailable', () => {
  test('reshapes the answer a request gets while the shared store cannot be reached (storeDown: closed); Retry-After stays', async () => {
    // Port 1 on 127.0.0.1: nothing listens there, the store is unreachable from the start.
    const proc = await serve(`server: { basePath: /v1 }
limits:
  rateLimit: { requests: 10, window: 1s }
  store: redis://127.0.0.1:1/0
  storeDown: closed
errors:
  storeUnavailable:
    status: 502
    headers: { x-store: "down at \${error.method} \${error.path}" }
    body: { error: { type: store_down, retry: "\${error.retryAfter}", key: "\${key.name}" } }
endpoints:
  - { method: GET, path: /a }
`);
    await proc.waitForOutput(/unreachable/);
    const res = await waitFor(async () => {
      const r = await fetch(`${proc.url}/v1/a?x=1`, { headers: { 'x-api-key': KEY } });
      return r.status === 502 ? r : undefined;
    });
    expect([res.headers.get('content-type'), res.headers.get('x-store'), res.headers.get('retry-after')]).toEqual([
      'application/json; charset=utf-8',
      'down at GET /a',
      '1',
    ]);
    expect(await res.json()).toEqual({ error: { type: 'store_down', retry: 1, key: 'default' } });
  });
});
