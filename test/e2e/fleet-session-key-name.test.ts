// A fleet host that skips a damaged session kept in Redis says so without its id when the id is a
// key: a session may be named as a key is, and a key never reaches a log.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startServe, useTempDir } from '../helpers/cli.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

const KEY = 'mk_fleetSessionNamedKey000000000001';
const dir = useTempDir('mockapi-fleet-session-key-');
let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

test('a damaged session named as a key is skipped with a line that shows <redacted>, not the key', async () => {
  redis.cli('HSET', '{mockapi:keyed}:fleet:sessions', KEY, 'not json');
  const folder = join(dir.path, 'host');
  await mkdir(folder, { recursive: true });
  const file = join(folder, 'mockapi.yaml');
  await writeFile(
    file,
    `project: keyed\napiKey: ${KEY}\nfleet: { store: ${redis.url} }\nendpoints:\n  - method: GET\n    path: /a\n`,
  );
  const host = await startServe(['-c', file, '--log', 'off', '--no-state']);
  await host.waitForOutput(/fleet: skipped session \S+ kept in the fleet's Redis/);
  expect(host.stderr()).toContain("fleet: skipped session <redacted> kept in the fleet's Redis");
  expect(host.stderr()).not.toContain(KEY);
  expect(await host.stop()).toBe(0);
}, 60_000);
