// Black-box tests of the rate limit, the monthly quota and the usage state (SPEC §5.2–5.4):
// the built CLI (`bin/mockapi.js` → dist/) on port 0, driven over real HTTP with undici.
import { describe, expect, test } from 'vitest';
import { Pool, request } from 'undici';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli, startServe, waitFor, writeConfig, type ServeProcess, useTempDir } from '../helpers/cli.js';

const KEY = 'mk_limitsE2e0123456789abcdefghijklmn';
const WRONG_KEY = 'mk_wrongKey0123456789abcdefghijklmno';
const JSON_TYPE = 'application/json; charset=utf-8';
const RATE_LIMITED = '{"error":"Too many requests","message":"Rate limit exceeded"}';
const QUOTA_EXCEEDED = '{"error":"Monthly request quota exceeded","code":"QUOTA_EXCEEDED"}';
const INVALID_KEY = '{"error":"Unauthorized","message":"Invalid API key"}';

/** A config with `limits` (YAML lines indented by two spaces under `limits:`), or none. */
function config(limits: string[] = []): string {
  return [
    'project: limits-e2e',
    `apiKey: ${KEY}`,
    ...(limits.length > 0 ? ['limits:', ...limits.map((l) => `  ${l}`)] : []),
    'endpoints:',
    '  - method: GET',
    '    path: /ok',
    '    response:',
    '      body: { ok: true }',
    '  - method: GET',
    '    path: /fail',
    '    failRate: 1',
    '    response:',
    '      body: { never: sent }',
    '',
  ].join('\n');
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** `key: null` sends no credential. */
async function get(base: string, path: string, key: string | null = KEY): Promise<Answer> {
  const res = await request(`${base}${path}`, { headers: key === null ? {} : { 'x-api-key': key } });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** A 429 with exactly `body` and these RateLimit-Limit and RateLimit-Remaining values. */
function expectRefused(a: Answer, body: string, limit: number, remaining: number): void {
  expect(a.status).toBe(429);
  expect(a.text).toBe(body);
  expect(a.headers['ratelimit-limit']).toBe(String(limit));
  expect(a.headers['ratelimit-remaining']).toBe(String(remaining));
}

/** `count` GETs of `path` with the key, all sent at once, each on a connection of its own. */
async function getConcurrently(base: string, path: string, count: number): Promise<Answer[]> {
  const pool = new Pool(base, { connections: count, pipelining: 1 });
  try {
    return await Promise.all(
      Array.from({ length: count }, async () => {
        const res = await pool.request({ path, method: 'GET', headers: { 'x-api-key': KEY } });
        return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
      }),
    );
  } finally {
    await pool.close();
  }
}

/** The calendar month (UTC) now, `YYYY-MM`. */
function monthNow(): string {
  return new Date().toISOString().slice(0, 7);
}

/** Whole seconds from now until the next UTC month begins. */
function secondsToNextMonth(): number {
  const d = new Date();
  return Math.ceil((Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) - Date.now()) / 1000);
}

const stateText = (month: string, requests: number) => JSON.stringify({ version: 1, usage: { month, requests } });

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

async function readState(file: string): Promise<unknown> {
  return JSON.parse(await readFile(file, 'utf8'));
}

const temp = useTempDir('mockapi-limits-e2e-', { each: true });
let file: string;

describe('rate limit (SPEC §5.2)', () => {
  test('400 concurrent requests against 100 a minute: exactly 100 admitted, 300 refused with the exact 429', async () => {
    file = await writeConfig(temp.path, config(['rateLimit:', '  requests: 100', '  window: 1m']));
    const server = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: temp.path });
    const answers = await getConcurrently(server.url, '/mock/ok', 400);
    const admitted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    expect(admitted).toHaveLength(100);
    expect(refused).toHaveLength(300);

    // Every admitted request saw a different Remaining: 99 down to 0, each exactly once.
    const remaining = admitted.map((a) => Number(a.headers['ratelimit-remaining'])).sort((x, y) => x - y);
    expect(remaining).toEqual(Array.from({ length: 100 }, (_, i) => i));
    for (const a of admitted) {
      expect(a.text).toBe('{"ok":true}');
      expect(a.headers['ratelimit-limit']).toBe('100');
    }
    for (const r of refused) {
      expect(r.text).toBe(RATE_LIMITED);
      expect(r.headers['content-type']).toBe(JSON_TYPE);
      expect(r.headers['ratelimit-limit']).toBe('100');
      expect(r.headers['ratelimit-remaining']).toBe('0');
      const retryAfter = r.headers['retry-after'] as string;
      expect(retryAfter).toMatch(/^\d+$/);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(retryAfter)).toBeLessThanOrEqual(60);
      const reset = r.headers['ratelimit-reset'] as string;
      expect(reset).toMatch(/^\d+$/);
      expect(Number(reset)).toBeLessThanOrEqual(60);
    }
    // Still full: one more is refused too.
    const after = await get(server.url, '/mock/ok');
    expect(after.status).toBe(429);
    expect(after.text).toBe(RATE_LIMITED);
    expect(await server.stop()).toBe(0);
  });

  test('delayed answers carry the RateLimit-* values of their own admission, though they share one header list', async () => {
    const delayed = config(['rateLimit:', '  requests: 10', '  window: 1m']).replace(
      '    path: /ok\n',
      '    path: /ok\n    delay: 300ms\n',
    );
    file = await writeConfig(temp.path, delayed);
    const server = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: temp.path });
    // Six admitted before any of them is answered: each answer is written after the others were counted.
    const answers = await getConcurrently(server.url, '/mock/ok', 6);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(answers.map((a) => Number(a.headers['ratelimit-remaining'])).sort((x, y) => x - y)).toEqual([
      4, 5, 6, 7, 8, 9,
    ]);
    // And an answer without delay right after shows the count at its own admission.
    const next = await get(server.url, '/mock/fail');
    expect(next.headers['ratelimit-remaining']).toBe('3');
    expect(await server.stop()).toBe(0);
  });

  test('RateLimit-* headers count down on admitted requests, 404 and simulated 500 included; 401s consume nothing', async () => {
    file = await writeConfig(temp.path, config(['rateLimit:', '  requests: 10', '  window: 1m']));
    const server = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: temp.path });

    const expectLimitHeaders = (a: Answer, remaining: number) => {
      expect(a.headers['ratelimit-limit']).toBe('10');
      expect(a.headers['ratelimit-remaining']).toBe(String(remaining));
      const reset = a.headers['ratelimit-reset'] as string;
      expect(reset).toMatch(/^\d+$/);
      expect(Number(reset)).toBeGreaterThanOrEqual(1);
      expect(Number(reset)).toBeLessThanOrEqual(60);
      expect(a.headers['retry-after']).toBeUndefined();
    };

    const first = await get(server.url, '/mock/ok');
    expect(first.status).toBe(200);
    expectLimitHeaders(first, 9);
    const second = await get(server.url, '/mock/ok');
    expect(second.status).toBe(200);
    expectLimitHeaders(second, 8);

    const missing = await get(server.url, '/mock/nope');
    expect(missing.status).toBe(404);
    expect(missing.text).toBe('{"error":"not_found","message":"No endpoint configured for GET /nope"}');
    expectLimitHeaders(missing, 7);

    const failed = await get(server.url, '/mock/fail');
    expect(failed.status).toBe(500);
    expect(failed.text).toBe('{"error":"simulated_failure","message":"Random failure triggered"}');
    expectLimitHeaders(failed, 6);

    // 50 requests with a wrong key and one without: 401, no RateLimit headers, nothing consumed.
    const bad = await Promise.all(Array.from({ length: 50 }, () => get(server.url, '/mock/ok', WRONG_KEY)));
    for (const b of bad) {
      expect(b.status).toBe(401);
      expect(b.text).toBe(INVALID_KEY);
      expect(b.headers['ratelimit-limit']).toBeUndefined();
      expect(b.headers['ratelimit-remaining']).toBeUndefined();
    }
    const none = await get(server.url, '/mock/ok', null);
    expect(none.status).toBe(401);
    expect(none.text).toBe('{"error":"Unauthorized","message":"No API key provided"}');
    expect(none.headers['ratelimit-remaining']).toBeUndefined();

    const next = await get(server.url, '/mock/ok');
    expect(next.status).toBe(200);
    expectLimitHeaders(next, 5);
    for (let remaining = 4; remaining >= 0; remaining--) {
      const a = await get(server.url, '/mock/ok');
      expect(a.status).toBe(200);
      expectLimitHeaders(a, remaining);
    }
    const refused = await get(server.url, '/mock/ok');
    expect(refused.status).toBe(429);
    expect(refused.text).toBe(RATE_LIMITED);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(await server.stop()).toBe(0);
  });

  test('a reload to more requests in a longer window counts everything admitted before it (issue #12 item 6)', async () => {
    file = await writeConfig(temp.path, config(['rateLimit:', '  requests: 3', '  window: 100ms']));
    const server = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: temp.path });
    // 9 admitted under 3 per 100 ms: at least 200 ms, more than the old window holds.
    let admitted = 0;
    await waitFor(
      async () => ((await get(server.url, '/mock/ok')).status === 200 && ++admitted === 9) || undefined,
      10_000,
      5,
    );

    const hourly = config(['rateLimit:', '  requests: 9', '  window: 1h']);
    await writeFile(file, hourly);
    await waitFor(
      async () =>
        JSON.parse(await (await request(`${server.url}/__mockapi/health`)).body.text()).revision === sha256(hourly) ||
        undefined,
      10_000,
    );
    // 9 were admitted in the last hour: full until the first of them leaves it.
    for (let i = 0; i < 5; i++) {
      const a = await get(server.url, '/mock/ok');
      expectRefused(a, RATE_LIMITED, 9, 0);
      expect(Number(a.headers['retry-after'])).toBeGreaterThan(3_500);
      expect(Number(a.headers['retry-after'])).toBeLessThanOrEqual(3_600);
    }
    expect(await server.stop()).toBe(0);
  });
});

describe('monthly quota (SPEC §5.3)', () => {
  test('quota 3: a 200, a 404 and a simulated 500 use it up; the 4th gets the quota 429 until next month; 401s do not count', async () => {
    file = await writeConfig(temp.path, config(['monthlyQuota: 3']));
    const server = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: temp.path });

    for (let i = 0; i < 5; i++) expect((await get(server.url, '/mock/ok', WRONG_KEY)).status).toBe(401);
    expect((await get(server.url, '/mock/ok', null)).status).toBe(401);

    expect((await get(server.url, '/mock/ok')).status).toBe(200);
    expect((await get(server.url, '/mock/nope')).status).toBe(404);
    expect((await get(server.url, '/mock/fail')).status).toBe(500);

    const expected = secondsToNextMonth();
    const refused = await get(server.url, '/mock/ok');
    expect(refused.status).toBe(429);
    expect(refused.text).toBe(QUOTA_EXCEEDED);
    expect(JSON.parse(refused.text)).not.toHaveProperty('message');
    expect(refused.headers['content-type']).toBe(JSON_TYPE);
    const retryAfter = refused.headers['retry-after'] as string;
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Math.abs(Number(retryAfter) - expected)).toBeLessThanOrEqual(2);
    // No rate limit configured: no RateLimit headers.
    expect(refused.headers['ratelimit-limit']).toBeUndefined();

    // Refused requests are not counted either, and stay refused; a wrong key is still a 401 first.
    expect((await get(server.url, '/mock/nope')).text).toBe(QUOTA_EXCEEDED);
    expect((await get(server.url, '/mock/ok', WRONG_KEY)).status).toBe(401);
    expect(await server.stop()).toBe(0);
  });

  test('with a rate limit too, the quota 429 carries the RateLimit headers and consumes no slot', async () => {
    file = await writeConfig(temp.path, config(['rateLimit:', '  requests: 10', '  window: 1m', 'monthlyQuota: 2']));
    const server = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: temp.path });
    expect((await get(server.url, '/mock/ok')).headers['ratelimit-remaining']).toBe('9');
    expect((await get(server.url, '/mock/ok')).headers['ratelimit-remaining']).toBe('8');
    for (let i = 0; i < 3; i++) {
      const refused = await get(server.url, '/mock/ok');
      expectRefused(refused, QUOTA_EXCEEDED, 10, 8);
      expect(Math.abs(Number(refused.headers['retry-after']) - secondsToNextMonth())).toBeLessThanOrEqual(2);
    }
    expect(await server.stop()).toBe(0);
  });
});

describe('usage state (SPEC §5.4)', () => {
  test('default .mockapi/state.json: written on SIGTERM, with a .gitignore; a restart and `mockapi usage` continue from it', async () => {
    file = await writeConfig(temp.path, config(['monthlyQuota: 7']));
    const stateFile = join(temp.path, '.mockapi', 'state.json');
    const first = await startServe(['-c', file, '--log', 'off'], { cwd: temp.path });
    for (let i = 0; i < 5; i++) expect((await get(first.url, '/mock/ok')).status).toBe(200);
    expect(await first.stop('SIGTERM')).toBe(0);

    expect(await readState(stateFile)).toEqual({ version: 1, usage: { month: monthNow(), requests: 5 } });
    expect(existsSync(join(temp.path, '.mockapi', '.gitignore'))).toBe(true);

    const usage = await runCli(['usage', '-c', file, '--json'], { cwd: temp.path });
    expect(usage.code).toBe(0);
    expect(JSON.parse(usage.stdout)).toEqual({
      month: monthNow(),
      requests: 5,
      quota: 7,
      remaining: 2,
      state: stateFile,
    });

    const second = await startServe(['-c', file, '--log', 'off'], { cwd: temp.path });
    expect((await get(second.url, '/mock/ok')).status).toBe(200);
    expect((await get(second.url, '/mock/nope')).status).toBe(404);
    const refused = await get(second.url, '/mock/ok');
    expect(refused.status).toBe(429);
    expect(refused.text).toBe(QUOTA_EXCEEDED);
    expect(await second.stop()).toBe(0);
    expect(await readState(stateFile)).toEqual({ version: 1, usage: { month: monthNow(), requests: 7 } });
  });

  test('--state <file> writes there (and `mockapi usage --state` reads it); --no-state writes no state', async () => {
    file = await writeConfig(temp.path, config(['monthlyQuota: 100']));
    const custom = join(temp.path, 'elsewhere', 'usage.json');
    const a = await startServe(['-c', file, '--state', custom, '--log', 'off'], { cwd: temp.path });
    for (let i = 0; i < 2; i++) expect((await get(a.url, '/mock/ok')).status).toBe(200);
    expect(await a.stop()).toBe(0);
    expect(await readState(custom)).toEqual({ version: 1, usage: { month: monthNow(), requests: 2 } });
    expect(existsSync(join(temp.path, '.mockapi', 'state.json'))).toBe(false);
    const usage = await runCli(['usage', '-c', file, '--state', custom, '--json'], { cwd: temp.path });
    expect(JSON.parse(usage.stdout)).toEqual({
      month: monthNow(),
      requests: 2,
      quota: 100,
      remaining: 98,
      state: custom,
    });

    // A relative --state is relative to the working directory.
    const b = await startServe(['-c', file, '--state', 'rel-state.json', '--log', 'off'], { cwd: temp.path });
    expect((await get(b.url, '/mock/ok')).status).toBe(200);
    expect(await b.stop()).toBe(0);
    expect(await readState(join(temp.path, 'rel-state.json'))).toEqual({
      version: 1,
      usage: { month: monthNow(), requests: 1 },
    });

    const before = await readFile(custom, 'utf8');
    const c = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: temp.path });
    for (let i = 0; i < 3; i++) expect((await get(c.url, '/mock/ok')).status).toBe(200);
    expect(await c.stop()).toBe(0);
    expect(existsSync(join(temp.path, '.mockapi', 'state.json'))).toBe(false);
    expect(await readFile(custom, 'utf8')).toBe(before);
    const files = (await readdir(temp.path, { recursive: true })).filter((f) => /state|usage/.test(f)).sort();
    expect(files).toEqual(['elsewhere/usage.json', 'rel-state.json']);
  });

  test('a running server flushes the count within a second of a change, without stopping', async () => {
    file = await writeConfig(temp.path, config(['monthlyQuota: 100']));
    const stateFile = join(temp.path, '.mockapi', 'state.json');
    const server = await startServe(['-c', file, '--log', 'off'], { cwd: temp.path });
    const stateNow = async () =>
      existsSync(stateFile) ? ((await readState(stateFile)) as { usage: { requests: number } }) : undefined;

    for (let i = 0; i < 3; i++) expect((await get(server.url, '/mock/ok')).status).toBe(200);
    await waitFor(async () => (await stateNow())?.usage.requests === 3, 5000);
    expect(await readState(stateFile)).toEqual({ version: 1, usage: { month: monthNow(), requests: 3 } });

    expect((await get(server.url, '/mock/ok')).status).toBe(200);
    expect((await get(server.url, '/mock/nope')).status).toBe(404);
    await waitFor(async () => (await stateNow())?.usage.requests === 5, 5000);
    expect(server.child.exitCode).toBe(null);
    // `mockapi usage` sees the running server's count.
    const usage = await runCli(['usage', '-c', file], { cwd: temp.path });
    expect(usage.stdout).toBe(`${monthNow()} (UTC): 5 requests\nquota: 100 a month, 95 remaining\n`);
    expect(await server.stop()).toBe(0);
  });

  /**
   * After a reset to 0, a quota of 3 admits exactly `remaining` more requests and refuses the
   * next; stopped, the server leaves 3 in the file.
   */
  async function expectQuotaFromZero(server: ServeProcess, stateFile: string, remaining: number): Promise<void> {
    for (let i = 0; i < remaining; i++) expect((await get(server.url, '/mock/ok')).status).toBe(200);
    expect((await get(server.url, '/mock/ok')).text).toBe(QUOTA_EXCEEDED);
    expect(await server.stop()).toBe(0);
    expect(await readState(stateFile)).toEqual({ version: 1, usage: { month: monthNow(), requests: 3 } });
  }

  const requestsIn = async (stateFile: string) =>
    existsSync(stateFile)
      ? ((await readState(stateFile)) as { usage: { requests: number } }).usage.requests
      : undefined;

  test('`mockapi usage --reset` reaches a running server at once (it watches the state file) and is not written over', async () => {
    file = await writeConfig(temp.path, config(['monthlyQuota: 3']));
    const stateFile = join(temp.path, '.mockapi', 'state.json');
    const server = await startServe(['-c', file, '--log', 'off'], { cwd: temp.path });
    for (let i = 0; i < 2; i++) expect((await get(server.url, '/mock/ok')).status).toBe(200);
    await waitFor(async () => (await requestsIn(stateFile)) === 2, 5000);

    expect((await runCli(['usage', '-c', file, '--reset'], { cwd: temp.path })).code).toBe(0);
    // No request in between: only the watcher can have told the server.
    await server.waitForOutput(/state\.json was changed outside this server; counting from 0/);
    await expectQuotaFromZero(server, stateFile, 3);
  });

  test('with --no-watch, a server over its quota takes a reset when it next refuses a request', async () => {
    file = await writeConfig(temp.path, config(['monthlyQuota: 3']));
    const stateFile = join(temp.path, '.mockapi', 'state.json');
    const server = await startServe(['-c', file, '--log', 'off', '--no-watch'], { cwd: temp.path });
    for (let i = 0; i < 3; i++) expect((await get(server.url, '/mock/ok')).status).toBe(200);
    expect((await get(server.url, '/mock/ok')).text).toBe(QUOTA_EXCEEDED);
    await waitFor(async () => (await requestsIn(stateFile)) === 3, 5000);

    const reset = await runCli(['usage', '-c', file, '--reset'], { cwd: temp.path });
    expect(reset.stderr).toBe(
      `note: the mockapi serve at ${server.url} runs with --no-watch: it takes the reset at its next write, or when it next refuses a request over the quota\n`,
    );
    // Refused requests are not counted, so polling until one gets through costs nothing.
    await waitFor(async () => (await get(server.url, '/mock/ok')).status === 200, 5000);
    await expectQuotaFromZero(server, stateFile, 2);
  });

  test('a corrupt state file is reported, set aside with its bytes, and counting starts at 0', async () => {
    file = await writeConfig(temp.path, config(['monthlyQuota: 2']));
    const stateFile = join(temp.path, '.mockapi', 'state.json');
    await mkdir(join(temp.path, '.mockapi'));
    await writeFile(stateFile, '{not json');

    const server = await startServe(['-c', file, '--log', 'off'], { cwd: temp.path });
    await server.waitForOutput(/corrupt/);
    const warning = server
      .stderr()
      .split('\n')
      .find((l) => l.includes('corrupt'))!;
    const match =
      /^mockapi warning: usage state (\S+) is corrupt \(not valid JSON\); moved it to (\S+) and started this month at 0$/.exec(
        warning,
      );
    expect(match, warning).not.toBe(null);
    expect(match![1]).toBe(stateFile);
    const aside = match![2]!;
    expect(aside.startsWith(join(temp.path, '.mockapi', 'state.json.corrupt-'))).toBe(true);
    expect(await readFile(aside, 'utf8')).toBe('{not json');
    const entries = await readdir(join(temp.path, '.mockapi'));
    expect(entries.filter((e) => e.includes('.corrupt-'))).toEqual([
      aside.slice(join(temp.path, '.mockapi').length + 1),
    ]);

    expect((await get(server.url, '/mock/ok')).status).toBe(200);
    expect((await get(server.url, '/mock/ok')).status).toBe(200);
    expect((await get(server.url, '/mock/ok')).text).toBe(QUOTA_EXCEEDED);
    expect(await server.stop()).toBe(0);
    expect(await readState(stateFile)).toEqual({ version: 1, usage: { month: monthNow(), requests: 2 } });
    expect(await readFile(aside, 'utf8')).toBe('{not json');
  });

  test("a state file of a later month (left by a future --clock) is set aside, and the quota and saving go on in the clock's month", async () => {
    file = await writeConfig(temp.path, config(['monthlyQuota: 3']));
    const stateFile = join(temp.path, '.mockapi', 'state.json');
    const future = await startServe(['-c', file, '--log', 'off', '--clock', '2027-03-10T00:00:00Z'], {
      cwd: temp.path,
    });
    expect((await get(future.url, '/mock/ok')).status).toBe(200);
    expect((await get(future.url, '/mock/ok')).status).toBe(200);
    expect(await future.stop()).toBe(0);
    expect(await readState(stateFile)).toEqual({ version: 1, usage: { month: '2027-03', requests: 2 } });

    const args = ['-c', file, '--log', 'off', '--clock', '2026-11-15T12:00:00Z'];
    const server = await startServe(args, { cwd: temp.path });
    await server.waitForOutput(/later month/);
    const warning = server
      .stderr()
      .split('\n')
      .find((l) => l.includes('later month'))!;
    const match =
      /^mockapi warning: usage state (\S+) holds 2027-03 \(2 requests\), a later month than the server's clock \(2026-11\); moved it to (\S+) and counting goes on in 2026-11$/.exec(
        warning,
      );
    expect(match, warning).not.toBe(null);
    expect(match![1]).toBe(stateFile);
    expect(match![2]!.startsWith(`${stateFile}.later-month-`)).toBe(true);
    expect(await readState(match![2]!)).toEqual({ version: 1, usage: { month: '2027-03', requests: 2 } });

    for (let i = 0; i < 3; i++) expect((await get(server.url, '/mock/ok')).status).toBe(200);
    // Saved while it runs, and the count survives the write: the quota holds after it.
    await waitFor(async () => (await readFile(stateFile, 'utf8').catch(() => '')).includes('"2026-11"'), 5_000);
    expect(await readState(stateFile)).toEqual({ version: 1, usage: { month: '2026-11', requests: 3 } });
    for (let i = 0; i < 9; i++) expect((await get(server.url, '/mock/ok')).text).toBe(QUOTA_EXCEEDED);
    expect(await server.stop()).toBe(0);
    expect(await readState(stateFile)).toEqual({ version: 1, usage: { month: '2026-11', requests: 3 } });

    const again = await startServe(args, { cwd: temp.path });
    expect((await get(again.url, '/mock/ok')).text).toBe(QUOTA_EXCEEDED);
    expect(await again.stop()).toBe(0);
    expect(again.stderr()).not.toMatch(/warning/);
  });

  test("a previous month's state starts this month at 0, without a warning", async () => {
    file = await writeConfig(temp.path, config(['monthlyQuota: 2']));
    const stateFile = join(temp.path, '.mockapi', 'state.json');
    await mkdir(join(temp.path, '.mockapi'));
    await writeFile(stateFile, `${stateText('2020-01', 999)}\n`);

    const usage = await runCli(['usage', '-c', file, '--json'], { cwd: temp.path });
    expect(JSON.parse(usage.stdout)).toMatchObject({ month: monthNow(), requests: 0, remaining: 2 });

    const server = await startServe(['-c', file, '--log', 'off'], { cwd: temp.path });
    expect((await get(server.url, '/mock/ok')).status).toBe(200);
    expect((await get(server.url, '/mock/ok')).status).toBe(200);
    expect((await get(server.url, '/mock/ok')).text).toBe(QUOTA_EXCEEDED);
    expect(await server.stop()).toBe(0);
    expect(server.stderr()).not.toMatch(/warning/);
    expect(await readState(stateFile)).toEqual({ version: 1, usage: { month: monthNow(), requests: 2 } });
    expect((await readdir(join(temp.path, '.mockapi'))).filter((e) => e.includes('corrupt'))).toEqual([]);
  });

  test('`mockapi usage`: human output, --json, used-up notice, and --reset zeroes it for the next serve', async () => {
    file = await writeConfig(temp.path, config(['monthlyQuota: 3']));
    const stateFile = join(temp.path, '.mockapi', 'state.json');
    const month = monthNow();

    const empty = await runCli(['usage', '-c', file], { cwd: temp.path });
    expect(empty).toEqual({
      code: 0,
      stdout: `${month} (UTC): 0 requests\nquota: 3 a month, 3 remaining\n`,
      stderr: `no usage state at ${stateFile} yet: nothing was counted\n`,
    });

    const server = await startServe(['-c', file, '--log', 'off'], { cwd: temp.path });
    expect((await get(server.url, '/mock/ok')).status).toBe(200);
    expect(await server.stop()).toBe(0);
    const one = await runCli(['usage', '-c', file], { cwd: temp.path });
    expect(one).toEqual({ code: 0, stdout: `${month} (UTC): 1 request\nquota: 3 a month, 2 remaining\n`, stderr: '' });

    const again = await startServe(['-c', file, '--log', 'off'], { cwd: temp.path });
    for (let i = 0; i < 2; i++) expect((await get(again.url, '/mock/ok')).status).toBe(200);
    expect((await get(again.url, '/mock/ok')).status).toBe(429);
    expect(await again.stop()).toBe(0);

    const d = new Date();
    const resumes = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
    const full = await runCli(['usage', '-c', file], { cwd: temp.path });
    expect(full).toEqual({
      code: 0,
      stdout: `${month} (UTC): 3 requests\nquota: 3 a month, 0 remaining\nquota used up: requests get 429 until ${resumes} 00:00 UTC\n`,
      stderr: '',
    });
    const json = await runCli(['usage', '-c', file, '--json'], { cwd: temp.path });
    expect(json.code).toBe(0);
    expect(json.stdout.endsWith('\n')).toBe(true);
    expect(json.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(json.stdout)).toEqual({ month, requests: 3, quota: 3, remaining: 0, state: stateFile });

    const reset = await runCli(['usage', '-c', file, '--reset'], { cwd: temp.path });
    expect(reset.code).toBe(0);
    expect(reset.stdout).toBe(`Usage for ${month} reset to 0 (was 3) in ${stateFile}\n`);
    expect(await readState(stateFile)).toEqual({ version: 1, usage: { month, requests: 0 } });
    const after = await runCli(['usage', '-c', file, '--json'], { cwd: temp.path });
    expect(JSON.parse(after.stdout)).toEqual({ month, requests: 0, quota: 3, remaining: 3, state: stateFile });

    const third = await startServe(['-c', file, '--log', 'off'], { cwd: temp.path });
    expect((await get(third.url, '/mock/ok')).status).toBe(200);
    expect(await third.stop()).toBe(0);
    expect(await readState(stateFile)).toEqual({ version: 1, usage: { month, requests: 1 } });
  });
});
