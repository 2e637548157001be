// rotate-key on a fleet whose hosts serve one file with --no-watch: the new key reaches every host
// through the fleet's Redis, not through a file watcher, so every line rotate-key prints is true (no
// "0 of 3", no --no-watch warning about a host that confirmed through the store). And the hosts,
// which reload one after the other, say nothing about serving different configs: they do not.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCli, startServe, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { hasRedisServer, startRedis, type RedisServer } from '../helpers/redis.js';

const OLD = 'mk_fleet_nowatch_key_000000000000001';
const NEW = 'mk_fleet_nowatch_rotated_0000000001';
const CONFIG = `project: fleet-no-watch
apiKey: ${OLD}
fleet: { store: "\${env.MOCKAPI_REDIS_URL}" }
endpoints:
  - method: GET
    path: /hello
    response: { body: { hello: true } }
`;

const dir = useTempDir('mockapi-fleet-rotate-');
let redis: RedisServer | undefined;
let file: string;
let hosts: ServeProcess[] = [];

const status = async (h: ServeProcess, key: string): Promise<number> =>
  (await fetch(`${h.mock}/hello`, { headers: { 'x-api-key': key } })).status;

/** Every host's `seen` in the store (Redis's clock, ms), by address. */
function seen(): Map<string, number> {
  const values = redis!.cli('HVALS', '{mockapi:fleet-no-watch}:fleet:hosts').split('\n').filter(Boolean);
  return new Map(values.map((v) => JSON.parse(v) as { address: string; seen: number }).map((h) => [h.address, h.seen]));
}

describe.runIf(hasRedisServer())('rotate-key on a fleet of --no-watch hosts', () => {
  beforeAll(async () => {
    redis = await startRedis();
    file = await writeConfig(dir.path, CONFIG);
    hosts = await Promise.all(
      [0, 1, 2].map(() =>
        startServe(['-c', file, '--no-watch', '--no-state', '--log', 'off'], {
          env: { MOCKAPI_REDIS_URL: redis!.url },
        }),
      ),
    );
  }, 60_000);
  afterAll(async () => {
    await Promise.all(hosts.map((h) => h.stop()));
    await redis?.stop();
  });

  test('every host confirms through the store: no "0 of", no --no-watch warning, old key 401 and new key 200 on each', async () => {
    for (const h of hosts) expect(await status(h, OLD)).toBe(200);
    const rotated = await runCli(['rotate-key', '-c', file, '--key', NEW], { env: { MOCKAPI_REDIS_URL: redis!.url } });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toBe(`${NEW}\n`);
    expect(rotated.stderr).not.toMatch(/\b0 of /);
    expect(rotated.stderr).not.toContain('--no-watch');
    expect(rotated.stderr).not.toContain('warning');
    expect(rotated.stderr).toBe(
      [
        `rotated apiKey in ${file}; 3 running servers confirmed`,
        'fleet: 3 of 3 hosts registered in the store confirmed the new apiKey',
        '',
      ].join('\n'),
    );
    for (const h of hosts) {
      expect(await status(h, OLD)).toBe(401);
      expect(await status(h, NEW)).toBe(200);
    }
  });

  test('after the rotation, no host says another serves a different config', async () => {
    // Each host checks the others' configs at every heartbeat: wait until each has said it is there
    // three more times (Redis's clock) after all of them serve the new key, then read their stderr.
    const after = seen();
    await waitFor(
      () => {
        const now = seen();
        return hosts.every((h) => (now.get(h.url) ?? 0) >= (after.get(h.url) ?? Infinity) + 3 * 2000);
      },
      30_000,
      100,
    );
    for (const h of hosts) expect(h.stderr()).not.toContain('serves config');
  }, 40_000);
});
