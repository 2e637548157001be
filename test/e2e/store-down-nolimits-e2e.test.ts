// A shared store (`--store`, `--fleet`) away, for a config with no limit to decide: `limits.storeDown`
// decides for limits only, so such requests are admitted whatever it says, their month's count kept
// on the server and added to the store once it is back; where there is a limit, `closed` still
// answers 503 (the built CLI on port 0, a real redis-server).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { runCli, startServe, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { hammer } from '../helpers/load.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

const KEY = 'mk_9WbDq2vG0yq7Jc4TnR1sXe8ZkP3fLmA6';
const dir = useTempDir('mockapi-store-down-nolimits-');
let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

const NO_LIMITS = 'endpoints:\n  - { method: GET, path: /hello, response: { body: { msg: config } } }\n';

async function serve(project: string, body: string, args: string[]): Promise<{ config: string; server: ServeProcess }> {
  const config = await writeConfig(dir.path, `project: ${project}\napiKey: ${KEY}\n${body}`, `${project}.yaml`);
  const server = await startServe(['-c', config, '--no-state', '--log', 'off', '--no-watch', ...args]);
  return { config, server };
}

const statuses = async (url: string, n: number): Promise<number[]> =>
  (await hammer([url], KEY, { clients: 1, max: n })).map((a) => a.status);

describe('a store away, and a config with no limit to decide', () => {
  it.each(['--store', '--fleet'])(
    '%s: requests are admitted under storeDown closed (the default), and the line says so',
    async (flag) => {
      const nowhere = `unix://${join(dir.path, 'nowhere.sock')}`;
      const { server } = await serve(`nolimits${flag}`, NO_LIMITS, [flag, nowhere]);
      await server.waitForOutput(/limit store .* unreachable/);
      expect(await statuses(`${server.mock}/hello`, 3)).toEqual([200, 200, 200]);
      expect(server.stderr()).toMatch(
        /unreachable \(.*\): with no limit to decide \(limits\.storeDown has nothing to apply to\), mock requests are admitted and counted locally until it is back/,
      );
      expect(server.stderr()).not.toContain('503');
      expect(await server.stop()).toBe(0);
    },
  );

  it('where there is a limit, storeDown closed still answers 503; an endpoint without one beside it is admitted', async () => {
    const nowhere = `unix://${join(dir.path, 'nowhere.sock')}`;
    const limited = `limits:\n  rateLimit: { requests: 100, window: 1m }\n${NO_LIMITS}`;
    const keyed = await serve('limited', limited, ['--fleet', nowhere]);
    const refused = await hammer([`${keyed.server.mock}/hello`], KEY, { clients: 1, max: 1 });
    expect(refused.map((a) => a.status)).toEqual([503]);
    expect(JSON.parse(refused[0]!.body)).toEqual({ error: 'store_unavailable', message: expect.any(String) });
    expect(keyed.server.stderr()).toMatch(/unreachable .*503 store_unavailable \(limits\.storeDown: closed\)/);
    // An endpoint's own window is a limit too; the endpoint beside it has none to decide.
    const ownWindow = `${NO_LIMITS}  - { method: GET, path: /search, limits: { rateLimit: { requests: 5, window: 1m } } }\n`;
    const perEndpoint = await serve('endpoint-limited', ownWindow, ['--store', nowhere]);
    expect(await statuses(`${perEndpoint.server.mock}/search`, 1)).toEqual([503]);
    expect(await statuses(`${perEndpoint.server.mock}/hello`, 1)).toEqual([200]);
    expect(await keyed.server.stop()).toBe(0);
    expect(await perEndpoint.server.stop()).toBe(0);
  });

  it.each([
    ['limits.store', (url: string) => `limits: { store: "${url}" }\n`],
    ['fleet.store', (url: string) => `fleet: { store: "${url}" }\n`],
  ])('%s: the month admitted while Redis was away reaches it when it is back', async (name, store) => {
    const { config, server } = await serve(`month-${name.replace('.', '-')}`, `${store(redis.url)}${NO_LIMITS}`, []);
    const usage = async () => JSON.parse((await runCli(['usage', '-c', config, '--json'])).stdout).requests as number;
    expect(await statuses(`${server.mock}/hello`, 2)).toEqual([200, 200]);
    await waitFor(async () => (await usage()) === 2, 10_000, 100);
    await redis.kill();
    try {
      await server.waitForOutput(/limit store .* unreachable/);
      expect(await statuses(`${server.mock}/hello`, 3)).toEqual([200, 200, 200]);
    } finally {
      await redis.restart(); // empty: only what the server counted while it was away comes back
    }
    await server.waitForOutput(/limit store .* is back/);
    await waitFor(async () => (await usage()) === 3, 10_000, 100);
    expect(await statuses(`${server.mock}/hello`, 1)).toEqual([200]);
    await waitFor(async () => (await usage()) === 4, 10_000, 100);
    expect(await server.stop()).toBe(0);
    expect(server.stderr()).not.toContain('at stop');
  });
});
