import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startServe, useTempDir, writeConfig } from '../helpers/cli.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

const dir = useTempDir('mockapi-store-loading-');
let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

/** A --require hook that reports on stderr every module of @redis/client the process loads. */
async function hook(): Promise<string> {
  return writeConfig(
    dir.path,
    "const M = require('node:module'); const load = M._load;\n" +
      "M._load = function (request, ...rest) { if (String(request).includes('@redis/client')) process.stderr.write('LOADED ' + request + '\\n'); return load.call(this, request, ...rest); };\n",
    'hook.cjs',
  );
}

describe('@redis/client is loaded only when a store is configured', () => {
  it('is not in the CLI bundle', () => {
    const bundle = readFileSync(join(ROOT, 'dist', 'cli', 'cli.bundle.cjs'), 'utf8');
    expect(bundle).not.toContain('node_modules/@redis/client');
  });

  it('serve without a store does not load it; with one it does', async () => {
    const env = { NODE_OPTIONS: `--require ${await hook()}` };
    const config = await writeConfig(
      dir.path,
      'project: loading\napiKey: k\nlimits:\n  monthlyQuota: 5\nendpoints: []\n',
    );
    const plain = await startServe(['-c', config, '--no-state', '--log', 'off'], { env });
    expect((await fetch(`${plain.url}/__mockapi/health`)).status).toBe(200);
    expect((await fetch(`${plain.mock}/x`, { headers: { 'x-api-key': 'k' } })).status).toBe(404);
    expect(await plain.stop()).toBe(0);
    expect(plain.stderr()).not.toContain('LOADED');

    const shared = await startServe(['-c', config, '--no-state', '--log', 'off', '--store', redis.url], { env });
    expect((await fetch(`${shared.mock}/x`, { headers: { 'x-api-key': 'k' } })).status).toBe(404);
    expect(await shared.stop()).toBe(0);
    expect(shared.stderr()).toContain('LOADED @redis/client');
  });
});
