import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli, startServe, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { hammer, type Answer } from '../helpers/load.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { keepStorePending } from '../../src/state/store-pending.js';

const KEY = 'mk_store_down_test';
const dir = useTempDir('mockapi-store-down-');
let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

async function serveTwo(project: string, storeDown: string): Promise<{ config: string; servers: ServeProcess[] }> {
  const yaml = `project: ${project}\napiKey: ${KEY}\nlimits:\n  rateLimit:\n    requests: 100000\n    window: 1s\n  store: ${redis.url}\n  storeDown: ${storeDown}\nendpoints:\n  - method: GET\n    path: /a\n`;
  const config = await writeConfig(dir.path, yaml, `${project}.yaml`);
  const servers = await Promise.all(
    [0, 1].map(() => startServe(['-c', config, '--no-state', '--log', 'off', '--no-watch'])),
  );
  return { config, servers };
}

/** Load on both servers while Redis is killed and restarted; resolves once 200s came back after the restart. */
async function killAndRestartUnderLoad(servers: ServeProcess[]): Promise<Answer[]> {
  const answers: Answer[] = [];
  let stop = false;
  const load = hammer(
    servers.map((s) => `${s.mock}/a`),
    KEY,
    { clients: 3, stop: () => stop, into: answers },
  );
  try {
    await waitFor(() => answers.length >= 20, 10_000);
    await redis.kill();
    await waitFor(() => servers.every((s) => /unreachable/.test(s.stderr())), 10_000, 20);
    const down = answers.length;
    await waitFor(() => answers.length >= down + 20, 10_000); // load while it is away
    await redis.restart();
    await waitFor(() => servers.every((s) => /is back: limits are shared again/.test(s.stderr())), 10_000, 20);
    const back = answers.length;
    await waitFor(() => answers.slice(back).filter((a) => a.status === 200).length >= 20, 10_000);
  } finally {
    stop = true;
    await load;
  }
  return answers;
}

function countMatches(text: string, pattern: RegExp): number {
  return text.split('\n').filter((line) => pattern.test(line)).length;
}

describe('the shared store killed mid-load and restarted (SPEC §12)', () => {
  it('storeDown: closed answers 503 store_unavailable while it is away, logs once each way, and recovers', async () => {
    const { servers } = await serveTwo('closed', 'closed');
    const answers = await killAndRestartUnderLoad(servers);
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200, 503]));
    const refused = answers.find((a) => a.status === 503)!;
    expect(refused.contentType).toBe('application/json; charset=utf-8');
    expect(JSON.parse(refused.body)).toEqual({ error: 'store_unavailable', message: expect.any(String) });
    expect(Object.keys(JSON.parse(refused.body))).toEqual(['error', 'message']);
    expect(answers.at(-1)!.status).toBe(200);
    for (const server of servers) {
      expect(
        countMatches(server.stderr(), /unreachable.*503 store_unavailable \(limits\.storeDown: closed\)/),
        server.stderr(),
      ).toBe(1);
      expect(countMatches(server.stderr(), /is back: limits are shared again/), server.stderr()).toBe(1);
    }
  });

  it('storeDown: open admits while it is away, logs once each way, and adds what it counted to the shared month', async () => {
    const { config, servers } = await serveTwo('open', 'open');
    const answers = await killAndRestartUnderLoad(servers);
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200]));
    for (const server of servers) {
      expect(
        countMatches(server.stderr(), /unreachable.*counting them locally \(limits\.storeDown: open\)/),
        server.stderr(),
      ).toBe(1);
      expect(countMatches(server.stderr(), /is back: limits are shared again/), server.stderr()).toBe(1);
    }

    // Without load: what a server admits while the store is away reaches the shared month on its return.
    const usage = async () => JSON.parse((await runCli(['usage', '-c', config, '--json'])).stdout).requests as number;
    await redis.kill();
    await waitFor(() => servers.every((s) => countMatches(s.stderr(), /unreachable/) === 2), 10_000, 20);
    const whileDown = await hammer([`${servers[0]!.mock}/a`], KEY, { clients: 1, max: 4 });
    expect(whileDown.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    await redis.restart(); // empty: only what was counted locally comes back
    await waitFor(async () => (await usage()) === 4, 10_000, 100);
    await hammer([`${servers[1]!.mock}/a`], KEY, { clients: 1, max: 1 });
    expect(await usage()).toBe(5);
  });

  it('storeDown: open, stopped before the store is back: what it admitted meanwhile is kept beside the state file and added by the next start', async () => {
    const project = 'open-stop';
    const yaml = `project: ${project}\napiKey: ${KEY}\nlimits:\n  store: ${redis.url}\n  storeDown: open\nendpoints:\n  - method: GET\n    path: /a\n`;
    const home = join(dir.path, project);
    await mkdir(home);
    const config = await writeConfig(home, yaml);
    const pending = join(home, '.mockapi', 'store-pending.json');
    const usage = async () => JSON.parse((await runCli(['usage', '-c', config, '--json'])).stdout).requests as number;
    const serve = () => startServe(['-c', config, '--log', 'off', '--no-watch'], { cwd: home });

    const first = await serve();
    expect((await hammer([`${first.mock}/a`], KEY, { clients: 1, max: 2 })).map((a) => a.status)).toEqual([200, 200]);
    // Admitted with nothing to decide, they were answered before Redis confirmed their count: it is
    // waited for, else one still in doubt when Redis goes is (rightly) kept as a sixth.
    await waitFor(async () => (await usage()) === 2, 10_000, 100);
    await redis.kill();
    await waitFor(() => /unreachable/.test(first.stderr()), 10_000, 20);
    expect((await hammer([`${first.mock}/a`], KEY, { clients: 1, max: 5 })).map((a) => a.status)).toEqual([
      200, 200, 200, 200, 200,
    ]);
    expect(await first.stop()).toBe(0);
    expect(first.stderr()).toContain(
      `limit store ${redis.url} unreachable at stop: 5 requests admitted while it was away (limits.storeDown: open) are not in its count; kept in ${pending}, and added to it by the next server of this config that reaches it`,
    );
    expect(JSON.parse(await readFile(pending, 'utf8'))).toEqual({
      version: 1,
      pending: [{ store: redis.url, project, month: expect.stringMatching(/^\d{4}-\d\d$/), requests: 5 }],
    });

    await redis.restart(); // empty: the 2 counted before it went away are gone with it
    const shown = await runCli(['usage', '-c', config, '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ requests: 0 });
    expect(shown.stderr).toContain(
      `5 requests admitted while the store was unreachable are kept in ${pending} and not in this count yet: the next server of this config adds them`,
    );
    const second = await serve();
    await waitFor(async () => (await usage()) === 5, 10_000, 100);
    await waitFor(() => !existsSync(pending), 10_000, 20);
    expect(second.stderr()).toContain(
      `5 requests admitted while the limit store ${redis.url} was unreachable, kept in ${pending} by an earlier stop, are added to it once it answers`,
    );
    expect((await hammer([`${second.mock}/a`], KEY, { clients: 1, max: 1 })).map((a) => a.status)).toEqual([200]);
    expect(await usage()).toBe(6);
    expect(await second.stop()).toBe(0);
    expect(second.stderr()).not.toContain('at stop');
  });

  it('`mockapi usage --reset` through the store drops what a stop kept for it', async () => {
    const project = 'open-reset';
    const home = join(dir.path, project);
    await mkdir(home);
    const config = await writeConfig(
      home,
      `project: ${project}\napiKey: ${KEY}\nlimits:\n  store: ${redis.url}\n  storeDown: open\nendpoints:\n  - method: GET\n    path: /a\n`,
    );
    const pending = join(home, '.mockapi', 'store-pending.json');
    await keepStorePending(pending, redis.url, project, new Map([['2026-11', 3]]), Date.now());
    const reset = await runCli(['usage', '-c', config, '--reset']);
    expect(reset.code).toBe(0);
    expect(reset.stderr).toContain(
      `dropped 3 requests admitted while the store was unreachable, kept in ${pending} by a stop`,
    );
    expect(existsSync(pending)).toBe(false);
  });

  it('storeDown: open with --no-state, stopped before the store is back: says on stderr exactly how many requests were not counted', async () => {
    const { servers } = await serveTwo('open-nostate', 'open');
    await redis.kill();
    await waitFor(() => /unreachable/.test(servers[0]!.stderr()), 10_000, 20);
    expect((await hammer([`${servers[0]!.mock}/a`], KEY, { clients: 1, max: 3 })).map((a) => a.status)).toEqual([
      200, 200, 200,
    ]);
    expect(await servers[0]!.stop()).toBe(0);
    expect(await servers[1]!.stop()).toBe(0);
    expect(servers[0]!.stderr()).toContain(
      `mockapi warning: limit store ${redis.url} unreachable at stop: 3 requests admitted while it was away (limits.storeDown: open) are not in its count, and are lost: without a state file (--no-state) nothing is kept for the next start`,
    );
    expect(servers[1]!.stderr()).not.toContain('at stop');
    await redis.restart();
  });

  it('storeDown: closed, Redis hangs with requests in flight: their 503s are not counted when it resumes and runs them', async () => {
    const { config, servers } = await serveTwo('hung', 'closed');
    const usage = async () => JSON.parse((await runCli(['usage', '-c', config, '--json'])).stdout).requests as number;
    expect((await hammer([`${servers[0]!.mock}/a`], KEY, { clients: 1, max: 1 })).map((a) => a.status)).toEqual([200]);
    redis.pause();
    let refused: Answer[];
    try {
      refused = await hammer([`${servers[0]!.mock}/a`], KEY, { clients: 3, max: 1 }); // each waits for its command's deadline
    } finally {
      redis.resume();
    }
    expect(refused.map((a) => a.status)).toEqual([503, 503, 503]);
    await waitFor(
      async () => (await hammer([`${servers[0]!.mock}/a`], KEY, { clients: 1, max: 1 }))[0]!.status === 200,
      10_000,
      20,
    );
    await waitFor(async () => (await usage()) === 2, 5_000, 100).catch(() => {});
    expect(await usage()).toBe(2);
    await Promise.all(servers.map((s) => s.stop()));
  });

  it('a server whose store is away at start starts anyway, says so once with its own storeDown, and uses the store once it is up', async () => {
    await redis.kill();
    const { config, servers } = await serveTwo('late', 'open');
    for (const server of servers) {
      expect(countMatches(server.stderr(), /unreachable.*\(limits\.storeDown: open\)/), server.stderr()).toBe(1);
      expect(server.stderr()).not.toMatch(/storeDown: closed/);
    }
    expect((await hammer([`${servers[0]!.mock}/a`], KEY, { clients: 1, max: 2 })).map((a) => a.status)).toEqual([
      200, 200,
    ]);
    await redis.restart();
    await waitFor(() => servers.every((s) => /is back: limits are shared again/.test(s.stderr())), 10_000, 20);
    await hammer([`${servers[1]!.mock}/a`], KEY, { clients: 1, max: 1 });
    await waitFor(
      async () => JSON.parse((await runCli(['usage', '-c', config, '--json'])).stdout).requests === 3,
      10_000,
      100,
    );
  });
});
