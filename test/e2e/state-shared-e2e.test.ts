// Black-box: several `mockapi serve` of one config sharing one usage state file (SPEC §5.4), hammered
// concurrently over real HTTP. No request any of them counted is lost, and `usage --reset` still zeroes it.
import { describe, expect, test } from 'vitest';
import { Pool } from 'undici';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli, startServe, waitFor, writeConfig, useTempDir, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_sharedState0123456789abcdefghijkl';
const QUOTA_EXCEEDED = '{"error":"Monthly request quota exceeded","code":"QUOTA_EXCEEDED"}';

const temp = useTempDir('mockapi-shared-e2e-', { each: true });

/** Two endpoints; a 404 is any other path. `quota` sets limits.monthlyQuota. */
const config = (quota?: number) => `project: shared-state
apiKey: ${KEY}
${quota === undefined ? '' : `limits: { monthlyQuota: ${quota} }\n`}endpoints:
  - { method: GET, path: /ok, response: { body: { ok: true } } }
  - { method: GET, path: /fail, failRate: 1 }
`;

/** Paths in turn: a 200, a 404 and a simulated 500 all count (SPEC §5.3). */
const PATHS = ['/mock/ok', '/mock/nope', '/mock/fail'];
const COUNTED = new Set([200, 404, 500]);

/** `count` requests to `server`, 16 at a time on kept-alive connections; returns how many were counted, and the statuses. */
async function hammer(
  server: ServeProcess,
  count: number,
): Promise<{ counted: number; statuses: Map<number, number> }> {
  const pool = new Pool(server.url, { connections: 16, pipelining: 1 });
  const statuses = new Map<number, number>();
  try {
    await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const res = await pool.request({
          path: PATHS[i % PATHS.length]!,
          method: 'GET',
          headers: { 'x-api-key': KEY },
        });
        await res.body.dump();
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      }),
    );
  } finally {
    await pool.close();
  }
  let counted = 0;
  for (const [status, n] of statuses) if (COUNTED.has(status)) counted += n;
  return { counted, statuses };
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const monthNow = () => new Date().toISOString().slice(0, 7);

async function usageJson(file: string): Promise<{ requests: number }> {
  const usage = await runCli(['usage', '-c', file, '--json'], { cwd: temp.path });
  expect(usage.code, usage.stderr).toBe(0);
  return JSON.parse(usage.stdout) as { requests: number };
}

async function serveN(file: string, n: number): Promise<ServeProcess[]> {
  return Promise.all(Array.from({ length: n }, () => startServe(['-c', file, '--log', 'off'], { cwd: temp.path })));
}

async function stopAllOk(servers: ServeProcess[]): Promise<void> {
  const codes = await Promise.all(servers.map((s) => s.stop('SIGTERM')));
  expect(codes, servers.map((s) => s.stderr()).join('\n')).toEqual(servers.map(() => 0));
}

describe('servers sharing one state file (SPEC §5.4)', () => {
  test('three servers hammered at once: the file holds exactly the sum of what they counted', async () => {
    const file = await writeConfig(temp.path, config());
    const servers = await serveN(file, 3);
    const results = await Promise.all(servers.map((s) => hammer(s, 2000)));
    for (const r of results) expect([...r.statuses.keys()].sort()).toEqual([200, 404, 500]);
    await stopAllOk(servers);

    const admitted = sum(results.map((r) => r.counted));
    expect(admitted).toBe(6000);
    expect((await usageJson(file)).requests).toBe(admitted);
    // The format stays exactly as SPEC §5.4 shows it.
    const state = JSON.parse(await readFile(join(temp.path, '.mockapi', 'state.json'), 'utf8')) as unknown;
    expect(state).toEqual({ version: 1, usage: { month: monthNow(), requests: admitted } });
  }, 120_000);

  test('a reset while they run zeroes it: what was counted before it is dropped, everything after it is kept', async () => {
    const file = await writeConfig(temp.path, config());
    const servers = await serveN(file, 2);
    await Promise.all(servers.map((s) => hammer(s, 1000))); // mostly not written yet when the reset comes
    const reset = await runCli(['usage', '-c', file, '--reset'], { cwd: temp.path });
    expect(reset.code, reset.stderr).toBe(0);
    const after = await Promise.all(servers.map((s) => hammer(s, 1000)));
    await stopAllOk(servers);

    expect((await usageJson(file)).requests).toBe(sum(after.map((r) => r.counted)));
    const state = JSON.parse(await readFile(join(temp.path, '.mockapi', 'state.json'), 'utf8')) as unknown;
    expect(state).toEqual({ version: 1, usage: { month: monthNow(), requests: 2000 } });
  }, 120_000);

  test('a shared monthlyQuota: each server admits at most the quota, every admitted request is in the file, and once written both refuse', async () => {
    const quota = 300;
    const file = await writeConfig(temp.path, config(quota));
    const stateFile = join(temp.path, '.mockapi', 'state.json');
    const servers = await serveN(file, 2);
    const results = await Promise.all(servers.map((s) => hammer(s, 1000)));
    let admitted = sum(results.map((r) => r.counted));
    for (const r of results) expect(r.counted).toBeLessThanOrEqual(quota);
    expect(admitted).toBeGreaterThanOrEqual(quota);

    // Within a second each server writes its count and sees the other's.
    const inFile = async () =>
      (JSON.parse(await readFile(stateFile, 'utf8')) as { usage: { requests: number } }).usage.requests;
    await waitFor(async () => (await inFile().catch(() => 0)) === admitted, 10_000);
    for (const server of servers) {
      await waitFor(async () => {
        const res = await fetch(`${server.url}/mock/ok`, { headers: { 'x-api-key': KEY } });
        if (res.status === 200) admitted++; // (its view not yet refreshed: still counted, so still expected in the file)
        return res.status === 429 && (await res.text()) === QUOTA_EXCEEDED;
      }, 10_000);
    }
    await stopAllOk(servers);
    expect((await usageJson(file)).requests).toBe(admitted);
  }, 120_000);
});
