// Papercuts a newcomer met (issue 45), each pinned: a rotated key keeps the service's prefix, a
// config error names the path parameter it cannot find, `usage` reads the running server's live
// count, and `record` says what it does.
import { afterAll, describe, expect, test } from 'vitest';
import { readFile } from 'node:fs/promises';
import { generateApiKey, keyPrefixOf } from '../../src/config/keys.js';
import { startServe, stopAll, useTempDir, writeConfig } from '../helpers/cli.js';
import { mock } from '../helpers/control.js';
import { NO_PROXY_ENV, startUpstream, type Upstream } from '../helpers/upstream.js';

afterAll(stopAll);

describe('a rotated key keeps its prefix up to the last `_`', () => {
  test.each([
    ['sk_test_ci_4eC39HqLyjWDarjtT1zdp7dc', 'sk_test_ci_'],
    ['mk_9WbDq2vG0yq7Jc4TnR1sXe8ZkP3fLmA6', 'mk_'],
    ['ghp_abc', 'ghp_'],
    ['plainkey', 'mk_'],
    ['_leading', 'mk_'],
    [`${'x'.repeat(60)}_tail`, 'mk_'],
  ])('%s → %s', (key, prefix) => {
    expect(keyPrefixOf(key)).toBe(prefix);
  });

  test('the new key is the prefix and 32 base62 characters', () => {
    expect(generateApiKey('sk_test_ci_')).toMatch(/^sk_test_ci_[0-9A-Za-z]{32}$/);
    expect(generateApiKey()).toMatch(/^mk_[0-9A-Za-z]{32}$/);
  });
});

describe('mockapi record says what it does, and keeps a 404-only route out unless asked', () => {
  const KEY = 'mk_recordNewcomer00000000000000001';
  const dir = useTempDir('mockapi-record-404-', { each: true });
  let up: Upstream;
  afterAll(async () => up?.close());

  async function recordOnce(extra: string): Promise<{ stderr: string; written: string }> {
    up ??= await startUpstream((req, res) => {
      const user = /^\/v1\/users\/(\d+)$/.exec(req.url);
      if (user !== null && user[1] !== '999') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ id: Number(user[1]) }));
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":"not_found"}');
    });
    await writeConfig(dir.path, `apiKey: ${KEY}\nupstream:\n  url: ${up.url}/v1\n${extra}endpoints: []\n`);
    const s = await startServe(['-c', 'mockapi.yaml', '--no-state', '--log', 'off'], {
      cwd: dir.path,
      env: NO_PROXY_ENV,
      command: 'record',
    });
    expect(s.stderr()).toContain(
      `recording from ${up.url}/v1: requests no endpoint answers go there and are recorded; stop with Ctrl-C to write them into mockapi.yaml\n`,
    );
    for (const path of ['/users/1', '/users/2', '/users/999', '/userz/1']) {
      const res = await mock(s.url, 'GET', `/mock${path}`, { headers: { 'x-api-key': KEY } });
      expect(res.status).toBe(path === '/users/999' || path === '/userz/1' ? 404 : 200);
    }
    expect(await s.stop()).toBe(0);
    return { stderr: s.stderr(), written: await readFile(`${dir.path}/mockapi.yaml`, 'utf8') };
  }

  test('by default: a route answered only 404 (a typo) is skipped and said so; a 404 beside 200s stays one of its answers', async () => {
    const { stderr, written } = await recordOnce('');
    expect(stderr).toContain('4 requests recorded into 1 endpoint of mockapi.yaml');
    expect(stderr).toContain('added GET /users/:id (3 requests;');
    expect(stderr).toContain(
      'skipped GET /userz/1: the upstream answered only 404 (1 request; recording.recordNotFound: true keeps it)',
    );
    expect(written).toContain('recorded: GET /users/:id');
    expect(written).toContain('status: 404');
    expect(written).not.toContain('/userz');
  });

  test('recording.recordNotFound: true records it as an endpoint', async () => {
    const { stderr, written } = await recordOnce('recording:\n  recordNotFound: true\n');
    expect(stderr).toContain('4 requests recorded into 2 endpoints of mockapi.yaml');
    expect(stderr).not.toContain('answered only 404');
    expect(written).toContain('recorded: GET /userz/:id');
  });
});
