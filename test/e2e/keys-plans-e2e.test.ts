// Black-box tests of `keys:`, `plans:` and endpoint limits: the built CLI on port 0, real HTTP.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { request } from 'undici';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli, startServe, useTempDir, waitFor, writeConfig } from '../helpers/cli.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

const DEFAULT = 'mk_keysDefault0123456789abcdefghij';
const CI = 'sk_test_ci_0123456789abcdefghijklmn';
const OTHER = 'sk_test_other_0123456789abcdefghijk';
const RATE_LIMITED = '{"error":"Too many requests","message":"Rate limit exceeded"}';
const QUOTA_EXCEEDED = '{"error":"Monthly request quota exceeded","code":"QUOTA_EXCEEDED"}';

/** A config with two more keys: `ci` on plan `pro`, `other` under `limits`. */
function config(extra: { limits?: string; plans?: string; endpointLimit?: string; store?: string } = {}): string {
  return [
    'project: keys-e2e',
    `apiKey: ${DEFAULT}`,
    'keys:',
    '  - name: ci',
    `    key: ${CI}`,
    '    plan: pro',
    '  - name: other',
    `    key: ${OTHER}`,
    'plans:',
    `  pro: ${extra.plans ?? '{ rateLimit: { requests: 3, window: 1m }, monthlyQuota: 4 }'}`,
    'limits:',
    `  ${extra.limits ?? 'rateLimit: { requests: 2, window: 1m }'}`,
    ...(extra.store === undefined ? [] : [`  store: ${extra.store}`]),
    'endpoints:',
    '  - method: GET',
    '    path: /a',
    '  - method: GET',
    '    path: /search',
    ...(extra.endpointLimit === undefined ? [] : [`    limits: { rateLimit: ${extra.endpointLimit} }`]),
    '',
  ].join('\n');
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

async function get(base: string, path: string, key: string): Promise<Answer> {
  const res = await request(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

async function statuses(base: string, path: string, key: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await get(base, path, key)).status);
  return out;
}

async function json(url: string, init: { method?: string; body?: unknown } = {}): Promise<any> {
  const res = await request(url, {
    method: (init.method ?? 'GET') as 'GET',
    ...(init.body === undefined
      ? {}
      : { body: JSON.stringify(init.body), headers: { 'content-type': 'application/json' } }),
  });
  return { status: res.statusCode, body: await res.body.json() };
}

const temp = useTempDir('mockapi-keys-e2e-', { each: true });

describe('keys and plans', () => {
  test('each key is limited on its own: a key of keys: by its plan, another by limits, apiKey by limits', async () => {
    const file = await writeConfig(temp.path, config());
    const server = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: temp.path });
    // default: limits (2 a minute)
    expect(await statuses(server.mock, '/a', DEFAULT, 3)).toEqual([200, 200, 429]);
    // ci: plan pro (3 a minute), untouched by the default key's full window
    expect(await statuses(server.mock, '/a', CI, 4)).toEqual([200, 200, 200, 429]);
    // other: no plan, so limits (2 a minute), counted apart from the default key
    const other = await statuses(server.mock, '/a', OTHER, 3);
    expect(other).toEqual([200, 200, 429]);
    const refused = await get(server.mock, '/a', CI);
    expect(refused.text).toBe(RATE_LIMITED);
    expect(refused.headers['ratelimit-limit']).toBe('3');
    expect(refused.headers['ratelimit-remaining']).toBe('0');

    const usage = await json(`${server.url}/__mockapi/usage`);
    // The body's own fields stay the default key's, as without keys:.
    expect(usage.body).toMatchObject({
      requests: 2,
      quota: null,
      remaining: null,
      rateLimit: { limit: 2, remaining: 0 },
    });
    expect(Object.keys(usage.body.keys)).toEqual(['default', 'ci', 'other']);
    expect(usage.body.keys.ci).toMatchObject({
      requests: 3,
      quota: 4,
      remaining: 1,
      plan: 'pro',
      rateLimit: { limit: 3, remaining: 0 },
    });
    expect(usage.body.keys.other).toMatchObject({ requests: 2, quota: null, plan: null });
    expect(JSON.stringify(usage.body)).not.toContain(CI);
    // A key of keys: sent anywhere else in a request is scrubbed from the journal like apiKey.
    await request(`${server.mock}/a?token=${OTHER}`, { headers: { 'x-api-key': CI, 'x-note': `copy ${CI}` } }).then(
      (r) => r.body.text(),
    );
    const journal = await request(`${server.url}/__mockapi/requests?limit=1`).then((r) => r.body.text());
    expect(journal).toContain('<redacted>');
    expect(journal).not.toContain(OTHER);
    expect(journal).not.toContain(CI);
    await server.stop();
  });

  test('a key added by a hot reload is accepted and counted on its own from the reload on', async () => {
    const without = config()
      .replace(/^keys:\n(?: .*\n)*/m, '')
      .replace(/^plans:\n(?: .*\n)*/m, '');
    const file = await writeConfig(temp.path, without);
    const server = await startServe(['-c', file, '--log', 'off'], { cwd: temp.path });
    expect((await get(server.mock, '/a', CI)).status).toBe(401);
    expect((await json(`${server.url}/__mockapi/usage`)).body.keys).toBeUndefined();
    await writeConfig(temp.path, config());
    await waitFor(async () => ((await get(server.mock, '/a', CI)).status === 200 ? true : undefined));
    const usage = await json(`${server.url}/__mockapi/usage`);
    expect(usage.body.keys.ci).toMatchObject({ requests: 1, plan: 'pro' });
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(JSON.parse(await readFile(join(temp.path, '.mockapi', 'state.key-ci.json'), 'utf8')).usage.requests).toBe(1);
  });

  test("a plan's monthly quota: the key gets the quota 429 while the others go on", async () => {
    const file = await writeConfig(temp.path, config({ plans: '{ monthlyQuota: 2 }' }));
    const server = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: temp.path });
    expect(await statuses(server.mock, '/a', CI, 2)).toEqual([200, 200]);
    const over = await get(server.mock, '/a', CI);
    expect(over.status).toBe(429);
    expect(over.text).toBe(QUOTA_EXCEEDED);
    // A plan without a rateLimit has none: no RateLimit-* headers for this key.
    expect(over.headers['ratelimit-limit']).toBeUndefined();
    expect((await get(server.mock, '/a', DEFAULT)).status).toBe(200);
    // POST /__mockapi/usage with a key name sets that key's month only.
    const set = await json(`${server.url}/__mockapi/usage`, { method: 'POST', body: { requests: 0, key: 'ci' } });
    expect(set.status).toBe(200);
    expect(set.body.keys.ci.requests).toBe(0);
    expect(set.body.requests).toBe(1);
    expect((await get(server.mock, '/a', CI)).status).toBe(200);
    const unknown = await json(`${server.url}/__mockapi/usage`, { method: 'POST', body: { requests: 0, key: 'nope' } });
    expect(unknown.status).toBe(404);
    await server.stop();
  });

  test('an endpoint limit applies per key, and a request it refuses does not consume the plan window', async () => {
    const file = await writeConfig(
      temp.path,
      config({ endpointLimit: '{ requests: 1, window: 1m }', limits: 'rateLimit: { requests: 5, window: 1m }' }),
    );
    const server = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: temp.path });
    const first = await get(server.mock, '/search', DEFAULT);
    expect(first.status).toBe(200);
    // The endpoint window (1, now full) is closer to full than the plan's (5, 4 left).
    expect(first.headers['ratelimit-limit']).toBe('1');
    expect(first.headers['ratelimit-remaining']).toBe('0');
    for (let i = 0; i < 3; i++) {
      const again = await get(server.mock, '/search', DEFAULT);
      expect(again.status).toBe(429);
      expect(again.text).toBe(RATE_LIMITED);
      expect(again.headers['ratelimit-limit']).toBe('1');
      expect(Number(again.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    // Another key has its own endpoint window.
    expect((await get(server.mock, '/search', OTHER)).status).toBe(200);
    // The three refusals took nothing of the default key's plan window: 4 of 5 left for other paths.
    expect(await statuses(server.mock, '/a', DEFAULT, 5)).toEqual([200, 200, 200, 200, 429]);
    const journal = await json(`${server.url}/__mockapi/requests?path=/mock/search&limit=1`);
    expect(journal.body.requests[0].credential).toEqual({ via: 'bearer', key: 'current', keyName: 'other' });
    await server.stop();
  });

  test("each key's month survives a restart in the state file, and mockapi usage shows every key by name", async () => {
    const file = await writeConfig(temp.path, config());
    const first = await startServe(['-c', file, '--log', 'off'], { cwd: temp.path });
    await statuses(first.mock, '/a', CI, 3);
    await statuses(first.mock, '/a', DEFAULT, 1);
    expect(await first.stop('SIGTERM')).toBe(0);
    const state = join(temp.path, '.mockapi');
    // The default key keeps the file and format it always had.
    expect(JSON.parse(await readFile(join(state, 'state.json'), 'utf8')).usage.requests).toBe(1);
    expect(JSON.parse(await readFile(join(state, 'state.key-ci.json'), 'utf8')).usage.requests).toBe(3);
    for (const name of await readdir(state)) {
      if (name.endsWith('.json')) expect(await readFile(join(state, name), 'utf8')).not.toContain(CI);
    }
    const second = await startServe(['-c', file, '--log', 'off'], { cwd: temp.path });
    const usage = await json(`${second.url}/__mockapi/usage`);
    expect(usage.body.requests).toBe(1);
    expect(usage.body.keys.ci.requests).toBe(3);
    // The fourth request of the month is the plan's last.
    expect(await statuses(second.mock, '/a', CI, 1)).toEqual([200]);
    expect(await second.stop('SIGTERM')).toBe(0);

    const cli = await runCli(['usage', '-c', file, '--json'], { cwd: temp.path });
    expect(cli.code).toBe(0);
    const report = JSON.parse(cli.stdout);
    expect(report.requests).toBe(1);
    expect(report.keys.ci).toMatchObject({ requests: 4, quota: 4, remaining: 0, plan: 'pro' });
    const text = await runCli(['usage', '-c', file], { cwd: temp.path });
    expect(text.stdout).toContain('key ci (plan pro): 4 requests; quota 4 a month, 0 remaining');
    expect(text.stdout + text.stderr).not.toContain(CI);
    const reset = await runCli(['usage', '-c', file, '--reset', '--json'], { cwd: temp.path });
    expect(JSON.parse(reset.stdout).keys.ci.requests).toBe(0);
    expect(JSON.parse(await readFile(join(state, 'state.key-ci.json'), 'utf8')).usage.requests).toBe(0);
  });

  test('an old state file (one key) still loads as the default key', async () => {
    const file = await writeConfig(temp.path, config());
    const month = new Date().toISOString().slice(0, 7);
    await mkdir(join(temp.path, '.mockapi'), { recursive: true });
    await writeFile(
      join(temp.path, '.mockapi', 'state.json'),
      `{"version":1,"usage":{"month":"${month}","requests":7}}\n`,
    );
    const server = await startServe(['-c', file, '--log', 'off'], { cwd: temp.path });
    const usage = await json(`${server.url}/__mockapi/usage`);
    expect(usage.body.requests).toBe(7);
    expect(usage.body.keys.ci.requests).toBe(0);
    await server.stop();
  });

  test('rotate-key --name rotates that key only; the running server refuses the old one when it exits', async () => {
    const file = await writeConfig(temp.path, `# keep me\n${config()}`);
    const server = await startServe(['-c', file, '--log', 'json'], { cwd: temp.path });
    expect((await get(server.mock, '/a', CI)).status).toBe(200);
    const before = await readFile(file, 'utf8');
    const rotated = await runCli(['rotate-key', '-c', file, '--name', 'ci'], { cwd: temp.path });
    expect(rotated.code).toBe(0);
    const newKey = rotated.stdout.trim();
    // The new key keeps the old one's prefix up to its last `_`: a Stripe-style test key stays one.
    expect(newKey).toMatch(/^sk_test_ci_[0-9A-Za-z]{32}$/);
    expect(rotated.stderr).toContain('rotated key ci in');
    expect(rotated.stderr).toContain('1 running server confirmed');
    // Only that key's value changed, byte for byte.
    expect(await readFile(file, 'utf8')).toBe(before.replace(CI, newKey));
    expect((await get(server.mock, '/a', CI)).status).toBe(401);
    expect((await get(server.mock, '/a', newKey)).status).toBe(200);
    expect((await get(server.mock, '/a', DEFAULT)).status).toBe(200);
    const journal = await json(`${server.url}/__mockapi/requests?limit=3`);
    expect(journal.body.requests[0].credential).toEqual({ via: 'bearer', key: 'previous', keyName: 'ci' });
    expect(journal.body.requests[1].credential).toEqual({ via: 'bearer', key: 'current', keyName: 'ci' });
    expect(journal.body.requests[2].credential).toEqual({ via: 'bearer', key: 'current', keyName: 'default' });
    // No key text in the journal or the log.
    expect(JSON.stringify(journal.body)).not.toContain(newKey);
    expect(server.stdout() + server.stderr()).not.toContain(newKey);
    expect(server.stdout() + server.stderr()).not.toContain(CI);

    const unknown = await runCli(['rotate-key', '-c', file, '--name', 'nope'], { cwd: temp.path });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('has no key named "nope"');

    // The admin API rotates a named key the same way, answering once the new key is served.
    const admin = await json(`${server.url}/__mockapi/rotate-key`, { method: 'POST', body: { name: 'other' } });
    expect(admin.status).toBe(200);
    expect((await get(server.mock, '/a', OTHER)).status).toBe(401);
    expect((await get(server.mock, '/a', admin.body.key)).status).toBe(200);
    expect((await json(`${server.url}/__mockapi/rotate-key`, { method: 'POST', body: { name: 'nope' } })).status).toBe(
      409,
    );
    await server.stop();
  });
});

describe('keys config errors', () => {
  test('a key listed twice, a repeated name, the name default and an unknown plan are errors with file, line and column', async () => {
    const file = await writeConfig(
      temp.path,
      [
        `apiKey: ${DEFAULT}`,
        'keys:',
        '  - name: ci',
        `    key: ${CI}`,
        '  - name: ci',
        `    key: ${OTHER}`,
        '  - name: again',
        `    key: ${CI}`,
        '    plan: gold',
        '  - name: default',
        `    key: ${DEFAULT}`,
        'plans:',
        '  pro: { monthlyQuota: 5 }',
        '',
      ].join('\n'),
    );
    const result = await runCli(['validate', '-c', file], { cwd: temp.path });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'mockapi.yaml:5:11: keys[1].name "ci" is already the name of keys[0]; each key needs its own name',
    );
    expect(result.stderr).toContain(
      'mockapi.yaml:8:10: keys[2].key is the same key as keys[0]; each key must be different',
    );
    expect(result.stderr).toContain('mockapi.yaml:9:11: keys[2].plan names no plan under plans: "gold" (plans: pro)');
    expect(result.stderr).toContain(
      'mockapi.yaml:10:11: keys[3].name "default" is the name of apiKey; give this key another name',
    );
    expect(result.stderr).toContain(
      'mockapi.yaml:11:10: keys[3].key is the same key as apiKey; each key must be different',
    );
    expect(result.stderr).not.toContain(CI);
  });
});

describe('keys in a shared store', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());

  test('each key has its own window and month in Redis, stored under its name, never its text', async () => {
    const file = await writeConfig(temp.path, config({ store: redis.url }));
    const a = await startServe(['-c', file, '--no-state', '--log', 'off', '--no-watch'], { cwd: temp.path });
    const b = await startServe(['-c', file, '--no-state', '--log', 'off', '--no-watch'], { cwd: temp.path });
    // ci's plan allows 3 a minute across both servers; the default key's 2 are its own.
    expect([...(await statuses(a.mock, '/a', CI, 2)), ...(await statuses(b.mock, '/a', CI, 2))]).toEqual([
      200, 200, 200, 429,
    ]);
    expect([...(await statuses(b.mock, '/a', DEFAULT, 1)), ...(await statuses(a.mock, '/a', DEFAULT, 2))]).toEqual([
      200, 200, 429,
    ]);
    const keys = redis.cli('KEYS', '*').split('\n').sort();
    expect(keys).toEqual([
      '{mockapi:keys-e2e}:key:ci:meta',
      '{mockapi:keys-e2e}:key:ci:usage',
      '{mockapi:keys-e2e}:key:ci:window',
      '{mockapi:keys-e2e}:meta',
      '{mockapi:keys-e2e}:usage',
      '{mockapi:keys-e2e}:window',
    ]);
    const usage = await json(`${b.url}/__mockapi/usage`);
    expect(usage.body.requests).toBe(2);
    expect(usage.body.keys.ci).toMatchObject({ requests: 3, quota: 4, remaining: 1, plan: 'pro' });
    await a.stop();
    await b.stop();
    const cli = await runCli(['usage', '-c', file, '--json'], { cwd: temp.path });
    expect(JSON.parse(cli.stdout).keys.ci.requests).toBe(3);
    const reset = await runCli(['usage', '-c', file, '--reset', '--json'], { cwd: temp.path });
    expect(reset.code).toBe(0);
    // Zeroed in the store: the month's field of ci is gone.
    expect(redis.cli('HGET', '{mockapi:keys-e2e}:key:ci:usage', JSON.parse(reset.stdout).keys.ci.month)).toBe('');
    const after = await runCli(['usage', '-c', file, '--json'], { cwd: temp.path });
    expect(JSON.parse(after.stdout).keys.ci.requests).toBe(0);
  });
});
