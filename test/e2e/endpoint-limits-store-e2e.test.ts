// Endpoint limits (`endpoints[].limits.rateLimit`) with a shared store: one window per endpoint and
// key across every server and every worker (the built CLI on port 0, a real redis-server).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { runCli, startServe, useTempDir, writeConfig } from '../helpers/cli.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { startWorkersServe } from '../helpers/workers-serve.js';

const KEY = 'mk_endpoint_store_0123456789abcdef';
const CI = 'sk_test_ep_store_ci_0123456789abcd';
const RATE_LIMITED = '{"error":"Too many requests","message":"Rate limit exceeded"}';
const dir = useTempDir('mockapi-ep-store-', { each: true });

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

function config(project: string, store: string | undefined, endpointLimit: number): string {
  return [
    `project: ${project}`,
    `apiKey: ${KEY}`,
    'keys:',
    '  - name: ci',
    `    key: ${CI}`,
    'limits:',
    '  rateLimit: { requests: 6, window: 1m }',
    ...(store === undefined ? [] : [`  store: ${store}`]),
    'endpoints:',
    '  - method: GET',
    '    path: /a',
    '  - method: GET',
    '    path: /search',
    `    limits: { rateLimit: { requests: ${endpointLimit}, window: 1m } }`,
    '',
  ].join('\n');
}

async function get(
  url: string,
  key = KEY,
): Promise<{ status: number; limit: unknown; remaining: unknown; text: string }> {
  const res = await request(url, { headers: { 'x-api-key': key } });
  return {
    status: res.statusCode,
    limit: res.headers['ratelimit-limit'],
    remaining: res.headers['ratelimit-remaining'],
    text: await res.body.text(),
  };
}

describe('endpoint limits with a shared store', () => {
  it('two servers admit exactly the endpoint limit between them; a refusal takes nothing of the plan; a reset empties it for both', async () => {
    const file = await writeConfig(dir.path, config('ep-two', redis.url, 3));
    const servers = await Promise.all(
      [0, 1].map(() => startServe(['-c', file, '--no-state', '--log', 'off', '--no-watch'], { cwd: dir.path })),
    );
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await get(`${servers[i % 2]!.mock}/search`));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429, 429, 429, 429, 429]);
    // The endpoint's window (3) is closer to full than the plan's (6): its headers, counted across both.
    expect(answers.slice(0, 4).map((a) => [a.limit, a.remaining])).toEqual([
      ['3', '2'],
      ['3', '1'],
      ['3', '0'],
      ['3', '0'],
    ]);
    expect(answers[3]!.text).toBe(RATE_LIMITED);
    // The five refusals took nothing of the plan's window: 3 of 6 left for other paths.
    const others = [];
    for (let i = 0; i < 4; i++) others.push((await get(`${servers[i % 2]!.mock}/a`)).status);
    expect(others).toEqual([200, 200, 200, 429]);
    // Another key has a window of its own on the endpoint.
    expect((await get(`${servers[1]!.mock}/search`, CI)).status).toBe(200);

    const reset = await request(`${servers[1]!.url}/__mockapi/reset`, {
      method: 'POST',
      body: '{"usage":false}',
      headers: { 'content-type': 'application/json' },
    });
    expect(reset.statusCode).toBe(200);
    await reset.body.text();
    expect(redis.cli('KEYS', '{mockapi:ep-two}*:ep:*')).toBe('');
    const after = [];
    for (let i = 0; i < 4; i++) after.push((await get(`${servers[i % 2]!.mock}/search`)).status);
    expect(after).toEqual([200, 200, 200, 429]);
    await Promise.all(servers.map((s) => s.stop()));
  });

  it('serve --workers 2 admits exactly the endpoint limit across its workers', async () => {
    const workers = await startWorkersServe(dir.path, config('ep-workers', undefined, 4));
    try {
      const statuses = [];
      // Each worker through its own port, in turn: the window is one for both.
      for (let i = 0; i < 10; i++) statuses.push((await get(`${workers.own[i % 2]}/mock/search`)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429, 429, 429]);
    } finally {
      await workers.stop();
    }
  });

  it('serve --workers without a store refuses a config whose endpoint sets limits', async () => {
    const file = await writeConfig(
      dir.path,
      config('ep-nostore', undefined, 4)
        .replace('  rateLimit: { requests: 6, window: 1m }\n', '  {}\n')
        .replace('limits:\n  {}\n', ''),
    );
    const result = await runCli(['serve', '-c', file, '--port', '0', '--workers', '2'], { cwd: dir.path });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'mockapi: --workers needs a shared store when an endpoint sets limits (endpoints[].limits.rateLimit):\n' +
        '  set limits.store or pass --store redis://host:port/db, or run without --workers (each worker would keep limits of its own)\n',
    );
  });

  it('with Redis away and storeDown: open, the fallback endpoint window follows the virtual clock: setting it back empties it', async () => {
    // Nothing listens on port 1: the store is away from the start.
    const file = await writeConfig(
      dir.path,
      config('ep-clock', 'redis://127.0.0.1:1', 1).replace('  store:', '  storeDown: open\n  store:'),
    );
    const server = await startServe(
      ['-c', file, '--no-state', '--log', 'off', '--no-watch', '--clock', '2026-11-20T12:00:00Z'],
      { cwd: dir.path },
    );
    const clock = (body: object) =>
      request(`${server.url}/__mockapi/clock`, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      }).then((r) => r.body.text());
    try {
      expect((await get(`${server.mock}/search`)).status).toBe(200);
      await clock({ advance: '2h' });
      expect((await get(`${server.mock}/search`)).status).toBe(200);
      expect((await get(`${server.mock}/search`)).status).toBe(429);
      // Back before that admission: the window would otherwise stay full "in the future".
      await clock({ set: '2026-11-20T12:30:00Z' });
      expect((await get(`${server.mock}/search`)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
