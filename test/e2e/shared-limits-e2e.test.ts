import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServe, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { hammer, type Answer } from '../helpers/load.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

const KEY = 'mk_shared_limits_test';
const dir = useTempDir('mockapi-shared-');
let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis({ tcp: true }); // a redis:// URL here; the unit tests use a unix socket
});
afterAll(() => redis?.stop());

async function serveFleet(
  n: number,
  project: string,
  limits: string,
  env?: Record<string, string>,
): Promise<{ config: string; servers: ServeProcess[] }> {
  const config = await writeConfig(
    dir.path,
    `project: ${project}\napiKey: ${KEY}\nlimits:\n${limits}\n  store: ${redis.url}\nendpoints:\n  - method: GET\n    path: /a\n`,
    `${project}.yaml`,
  );
  const servers = await Promise.all(
    Array.from({ length: n }, () =>
      startServe(['-c', config, '--no-state', '--log', 'off', '--no-watch'], env === undefined ? {} : { env }),
    ),
  );
  return { config, servers };
}

/**
 * The admissions of the request window as the store's own script recorded them, each at Redis's
 * time (MOCKAPI_LIMIT_AUDIT): read after the load, so the proof does not depend on how often this
 * machine could look at Redis while the load ran.
 */
function auditedAdmissions(project: string): Map<number, number> {
  const seen = new Map<number, number>();
  const lines = redis
    .cli('LRANGE', `{mockapi:${project}}:audit`, '0', '-1')
    .split('\n')
    .filter((line) => line.startsWith('r|'));
  for (const line of lines) {
    const ms = Number(line.slice(2));
    seen.set(ms, (seen.get(ms) ?? 0) + 1);
  }
  return seen;
}

describe('shared limits across four mockapi serve processes (SPEC §12)', () => {
  it('no interval of `window` admits more than `requests`, a full window holds exactly `requests`, and every admission is in Redis', async () => {
    const requests = 20;
    const windowMs = 1000;
    const { servers } = await serveFleet(
      4,
      'exact',
      `  rateLimit:\n    requests: ${requests}\n    window: ${windowMs}ms`,
      { MOCKAPI_LIMIT_AUDIT: '1000000' },
    );
    // On until a 429 came (a window was full) and 3.5 windows passed since the first admission was
    // seen: a loaded machine sends fewer requests a second, and may answer its first ones late, so
    // time from the start alone would say neither that a window filled nor that several did.
    const until = Date.now() + 3500;
    const answers: Answer[] = [];
    let firstAdmitted: number | undefined;
    const enough = () => {
      if (firstAdmitted === undefined && answers.some((a) => a.status === 200)) firstAdmitted = Date.now();
      return (
        Date.now() > until &&
        firstAdmitted !== undefined &&
        Date.now() - firstAdmitted > 3.5 * windowMs &&
        answers.some((a) => a.status === 429)
      );
    };
    await hammer(
      servers.map((s) => `${s.mock}/a`),
      KEY,
      { clients: 6, into: answers, stop: () => enough() || Date.now() > until + 40_000 },
    );

    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200, 429]));
    const admitted = answers.filter((a) => a.status === 200).length;
    const window = { seen: auditedAdmissions('exact') };
    const times = [...window.seen.keys()].sort((a, b) => a - b);
    expect(times.reduce((sum, t) => sum + window.seen.get(t)!, 0)).toBe(admitted);
    // Every interval (t - window, t] ending at an admission, which is where a window is fullest.
    let fullest = 0;
    for (const t of times) {
      let inWindow = 0;
      for (const u of times) if (u > t - windowMs && u <= t) inWindow += window.seen.get(u)!;
      expect(inWindow, `window ending at ${t}`).toBeLessThanOrEqual(requests);
      fullest = Math.max(fullest, inWindow);
    }
    expect(fullest).toBe(requests);
    // Spread over at least three windows, across every server.
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(2 * windowMs);
    expect(new Set(answers.filter((a) => a.status === 200).map((a) => a.server)).size).toBeGreaterThan(1);
  });

  it('a concurrent burst on four servers gets exactly `requests` admissions, one per remaining value', async () => {
    const { servers } = await serveFleet(4, 'burst', '  rateLimit:\n    requests: 40\n    window: 1h');
    const answers = await hammer(
      servers.map((s) => `${s.mock}/a`),
      KEY,
      { clients: 8, max: 10 },
    );
    const ok = answers.filter((a) => a.status === 200);
    expect(ok).toHaveLength(40);
    expect(ok.map((a) => Number(a.remaining)).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(answers.filter((a) => a.status === 429)).toHaveLength(320 - 40);
    expect(answers.find((a) => a.status === 429)!.body).toBe(
      '{"error":"Too many requests","message":"Rate limit exceeded"}',
    );
  });

  it('mockapi usage shows the month of every server, and --reset zeroes it for all of them', async () => {
    const { config, servers } = await serveFleet(2, 'usage', '  monthlyQuota: 1000');
    await hammer([`${servers[0]!.mock}/a`], KEY, { clients: 1, max: 7 });
    await hammer([`${servers[1]!.mock}/a`], KEY, { clients: 1, max: 5 });
    const shown = await runCli(['usage', '-c', config, '--json']);
    expect(shown.code).toBe(0);
    const month = new Date().toISOString().slice(0, 7);
    expect(JSON.parse(shown.stdout)).toMatchObject({ requests: 12, quota: 1000, remaining: 988, store: redis.url });
    expect(JSON.parse(shown.stdout).month).toMatch(/^\d{4}-\d{2}$/);
    expect(JSON.parse(shown.stdout).month).toBe(month);

    const reset = await runCli(['usage', '-c', config, '--reset', '--store', redis.url]);
    expect(reset.code).toBe(0);
    expect(reset.stdout).toBe(`Usage for ${month} reset to 0 (was 12) in ${redis.url}, for every server of usage\n`);
    await hammer([`${servers[1]!.mock}/a`], KEY, { clients: 1, max: 1 });
    expect(JSON.parse((await runCli(['usage', '-c', config, '--json'])).stdout).requests).toBe(1);
  });

  it('serve --store overrides limits.store, and a store URL of another scheme is wrong usage', async () => {
    const config = await writeConfig(
      dir.path,
      `project: flag\napiKey: ${KEY}\nlimits:\n  monthlyQuota: 5\n  store: redis://127.0.0.1:1/0\nendpoints: []\n`,
      'flag.yaml',
    );
    const server = await startServe(['-c', config, '--no-state', '--log', 'off', '--no-watch', '--store', redis.url]);
    expect((await fetch(`${server.mock}/x`, { headers: { 'x-api-key': KEY } })).status).toBe(404);
    expect(redis.cli('HGET', '{mockapi:flag}:usage', new Date().toISOString().slice(0, 7))).toBe('1');
    const wrong = await runCli(['serve', '-c', config, '--store', 'http://localhost:6379']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(
      /--store <url>' argument 'http:\/\/localhost:6379' is invalid\. must be a redis:\/\/host:port\/db/,
    );
  });
});
