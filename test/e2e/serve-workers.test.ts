import { readdir, readFile, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServe, useTempDir, waitFor, writeConfig } from '../helpers/cli.js';
import { hammer } from '../helpers/load.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

const KEY = 'mk_workers_test_key_0123456789';
const dir = useTempDir('mockapi-workers-', { each: true });
let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

const config = (body: string, limits = '') =>
  `project: workers\napiKey: ${KEY}\n${limits}endpoints:\n  - method: GET\n    path: /a\n    response:\n      body: { v: ${body} }\n  - method: GET\n    path: /slow\n    delay: 700ms\n`;

/** The URLs the workers registered (their own loopback ports), read from `.mockapi/servers/`. */
async function registered(): Promise<string[]> {
  const folder = join(dir.path, '.mockapi', 'servers');
  const names = (await readdir(folder).catch(() => [])).filter((n) => n.endsWith('.json'));
  return Promise.all(
    names.map(async (n) => (JSON.parse(await readFile(join(folder, n), 'utf8')) as { url: string }).url),
  );
}

async function body(url: string, key = KEY): Promise<string> {
  const res = await fetch(url, { headers: { 'x-api-key': key } });
  return `${res.status} ${await res.text()}`;
}

describe('serve --workers (SPEC §12)', () => {
  it('refuses limits without a shared store (exit 2, says what to do)', async () => {
    const file = await writeConfig(dir.path, config('1', 'limits:\n  monthlyQuota: 10\n'));
    const result = await runCli(['serve', '-c', file, '--port', '0', '--workers', '2']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'mockapi: --workers needs a shared store when limits are configured (limits.rateLimit, limits.monthlyQuota, limits.meters):\n' +
        '  set limits.store or pass --store redis://host:port/db, or run without --workers (each worker would keep limits of its own)\n',
    );
    expect((await runCli(['serve', '-c', file, '--workers', '0'])).code).toBe(2);
  });

  it('shares one port and one rate window across workers', async () => {
    const file = await writeConfig(dir.path, config('1', 'limits:\n  rateLimit: { requests: 12, window: 1h }\n'));
    const serve = await startServe(['-c', file, '--workers', '2', '--store', redis.url, '--no-state', '--log', 'off']);
    // startServe returns at the ready line; the inspector's line follows it.
    await waitFor(() => serve.stdout().includes('\ninspector: '));
    expect(serve.stdout()).toMatch(
      /^mockapi listening on http:\/\/127\.0\.0\.1:\d+ \(2 endpoints, 2 workers\)\ninspector: http:\/\/127\.0\.0\.1:\d+\/__mockapi\/\n$/,
    );
    const answers = await hammer([`${serve.mock}/a`], KEY, { clients: 4, max: 10 });
    expect(answers.filter((a) => a.status === 200)).toHaveLength(12);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(28);
    expect(await registered()).toHaveLength(2);
  });

  it('hot-reloads every worker, and rotate-key confirms only once every worker serves the new key', async () => {
    const file = await writeConfig(dir.path, config('1'));
    const serve = await startServe(['-c', file, '--workers', '2', '--no-state', '--log', 'off']);
    const own = await registered();
    expect(own).toHaveLength(2);
    expect(own).not.toContain(serve.url);

    await writeFile(file, config('2'));
    for (const url of own) await waitFor(async () => (await body(`${url}/mock/a`)) === '200 {"v":2}', 5000, 20);

    for (let round = 0; round < 5; round++) {
      const rotated = await runCli(['rotate-key', '-c', file], { cwd: dir.path });
      expect(rotated.code, rotated.stderr).toBe(0);
      expect(rotated.stderr).toMatch(/2 running servers confirmed/);
      const fresh = rotated.stdout.trim();
      const previous = round === 0 ? KEY : undefined;
      // Every worker, through the shared port (round-robin) and through its own.
      const targets = [...own, ...Array.from({ length: 6 }, () => serve.url)];
      for (const url of targets) expect(await body(`${url}/mock/a`, fresh)).toBe('200 {"v":2}');
      if (previous) for (const url of targets) expect((await body(`${url}/mock/a`, previous)).slice(0, 3)).toBe('401');
    }
  });

  it('replaces a worker that dies while serving', async () => {
    const file = await writeConfig(dir.path, config('1'));
    const serve = await startServe(['-c', file, '--workers', '2', '--no-state', '--log', 'off']);
    const folder = join(dir.path, '.mockapi', 'servers');
    const pids = async () => (await readdir(folder)).map((name) => Number(name.split('-')[0]));
    const [victim] = await pids();
    process.kill(victim!, 'SIGKILL');
    await serve.waitForOutput(new RegExp(`worker ${victim} exited \\(SIGKILL\\); starting another`));
    await waitFor(async () => (await pids()).filter((pid) => pid !== victim).length === 2, 10_000, 20);
    for (let i = 0; i < 4; i++) expect(await body(`${serve.mock}/a`)).toBe('200 {"v":1}');
  });

  it('stops every worker gracefully: in-flight requests finish, registrations go, exit 0', async () => {
    // With a store, the month's count in Redis says when every request has reached a worker.
    const file = await writeConfig(
      dir.path,
      config('1', 'project: stopping\nlimits:\n  monthlyQuota: 1000\n').replace('project: workers\n', ''),
    );
    const serve = await startServe(['-c', file, '--workers', '2', '--no-state', '--log', 'off', '--store', redis.url]);
    await waitFor(async () => (await registered()).length === 2);
    const inFlight = Array.from({ length: 6 }, () => {
      const agent = new Agent({ keepAlive: false });
      return new Promise<string>((done, fail) => {
        const req = request(`${serve.mock}/slow`, { agent, headers: { 'x-api-key': KEY } }, (res) => {
          let text = '';
          res.on('data', (d) => (text += d)).on('end', () => done(`${res.statusCode} ${text}`));
        });
        req.on('error', fail).end();
      });
    });
    const month = new Date().toISOString().slice(0, 7);
    await waitFor(() => redis.cli('HGET', '{mockapi:stopping}:usage', month) === '6', 10_000, 10); // all in flight
    const code = await serve.stop('SIGTERM');
    expect(code, serve.stderr()).toBe(0);
    expect(await Promise.all(inFlight)).toEqual(Array(6).fill('200 '));
    expect(await registered()).toEqual([]);
    expect(serve.stderr().match(/finishing in-flight requests/g)).toHaveLength(2);
  });
});
