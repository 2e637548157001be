// Meters per session, black-box: a named session (X-Mockapi-Session header, or the /__session/<id>/
// prefix) holds its own meters for every key and plan — its windows, its budgets, its futile
// retries, its usage, its reset and its virtual clock — and the default session's are untouched.
import { afterAll, describe, expect, test } from 'vitest';
import { runCli, startServe, stopAll, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';

afterAll(stopAll);
const dir = useTempDir('mockapi-meters-sessions-');
const KEY = 'mk_meters_sessions_default';
const CI = 'mk_meters_sessions_ci';

const CONFIG = [
  `apiKey: ${KEY}`,
  'keys:',
  `  - { name: ci, key: ${CI}, plan: tier1 }`,
  'plans:',
  '  tier1:',
  '    meters:',
  '      tokens: { limit: 100, window: 1m }',
  '      spend: { limit: 1, window: month, exhausted: insufficientQuota }',
  'limits:',
  '  meters:',
  '    tokens: { limit: 50, window: 1m }',
  'limitHeaders: openai',
  'endpoints:',
  '  - method: POST',
  '    path: /work',
  '    cost:',
  '      tokens: { reserve: "${body.reserve}", settle: "${response.body.used}" }',
  '      spend: "${response.body.used / 100}"',
  '    response: { body: { used: "${body.used}" } }',
].join('\n');

/** OpenAI's own answer to a spent budget: the default body of `insufficientQuota`. */
const INSUFFICIENT_QUOTA = {
  error: {
    message:
      'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.',
    type: 'insufficient_quota',
    param: null,
    code: 'insufficient_quota',
  },
};

async function serve(args: string[] = []): Promise<ServeProcess> {
  const config = await writeConfig(dir.path, CONFIG);
  return startServe(['-c', config, '--no-state', '--no-watch', '--log', 'off', ...args], { cwd: dir.path });
}

/** Where a request goes: the default session, a session named by the header, or one named by the path prefix. */
type Where = { header: string } | { prefix: string } | 'default';

function work(proc: ServeProcess, where: Where, key: string, reserve: number, used: number): Promise<Response> {
  const base =
    typeof where === 'object' && 'prefix' in where ? `${proc.url}/__session/${where.prefix}/mock` : proc.mock;
  const session: Record<string, string> =
    typeof where === 'object' && 'header' in where ? { 'x-mockapi-session': where.header } : {};
  return fetch(`${base}/work`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', ...session },
    body: JSON.stringify({ reserve, used }),
  });
}

async function admin(
  proc: ServeProcess,
  method: string,
  path: string,
  session: string | undefined,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const query = session === undefined ? '' : `${path.includes('?') ? '&' : '?'}session=${session}`;
  const res = await fetch(`${proc.url}/__mockapi/${path}${query}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

type Meter = { used: number; remaining: number; window: string; month?: string };
/** The meters of key `ci` (plan tier1) in a session, as `GET /__mockapi/usage` shows them. */
async function ciMeters(proc: ServeProcess, session?: string): Promise<Record<string, Meter>> {
  const usage = (await admin(proc, 'GET', 'usage', session)).body as {
    keys: Record<string, { plan: string | null; meters: Record<string, Meter> }>;
  };
  expect(usage.keys.ci?.plan).toBe('tier1');
  return usage.keys.ci!.meters;
}

async function futile(proc: ServeProcess, session?: string): Promise<Array<{ notes: string[] }>> {
  return (await admin(proc, 'GET', 'requests?futile=true', session)).body.requests as Array<{ notes: string[] }>;
}

describe('meters per session', () => {
  test('a session spends its own windows and budgets, per key and plan; other sessions and the default one are unaffected', async () => {
    const proc = await serve();
    const a = { header: 'a' };
    const first = await work(proc, a, CI, 90, 90);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit-tokens')).toBe('100');
    expect(first.headers.get('x-ratelimit-remaining-tokens')).toBe('10');
    const full = await work(proc, a, CI, 20, 20);
    expect(full.status).toBe(429);
    expect(await full.json()).toEqual({ error: 'Too many requests', message: 'Rate limit exceeded' });
    expect(Number(full.headers.get('retry-after'))).toBeGreaterThan(0);

    // Session b (by the path prefix) and the default session: the same key's window is empty there.
    const b = await work(proc, { prefix: 'b' }, CI, 20, 20);
    expect(b.status).toBe(200);
    expect(b.headers.get('x-ratelimit-remaining-tokens')).toBe('80');
    const plain = await work(proc, 'default', CI, 30, 30);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('x-ratelimit-remaining-tokens')).toBe('70');
    // The default key in session a has its own meters (limits: 50 tokens), not the plan's.
    const own = await work(proc, a, KEY, 20, 20);
    expect(own.status).toBe(200);
    expect(own.headers.get('x-ratelimit-remaining-tokens')).toBe('30');

    // GET /__mockapi/usage?session= shows each session's meters.
    await expect.poll(async () => (await ciMeters(proc, 'a')).spend?.used).toBe(0.9);
    expect((await ciMeters(proc, 'a')).tokens).toMatchObject({ window: '1m', used: 90, remaining: 10 });
    await expect.poll(async () => (await ciMeters(proc, 'b')).tokens?.used).toBe(20);
    expect((await ciMeters(proc, 'b')).spend).toMatchObject({ window: 'month', used: 0.2, remaining: 0.8 });
    await expect.poll(async () => (await ciMeters(proc)).tokens?.used).toBe(30);
    expect(((await admin(proc, 'GET', 'usage', 'a')).body.meters as Record<string, Meter>).tokens).toMatchObject({
      used: 20,
      remaining: 30,
    });
    expect(((await admin(proc, 'GET', 'usage', undefined)).body.meters as Record<string, Meter>).tokens).toMatchObject({
      used: 0,
      remaining: 50,
    });

    // Session a's budget spent: OpenAI's insufficient_quota there, a futile retry noted there only.
    const set = await admin(proc, 'POST', 'usage', 'a', { meter: 'spend', value: 1, key: 'ci' });
    expect(set.status).toBe(200);
    const spent = await work(proc, a, CI, 1, 1);
    expect(spent.status).toBe(429);
    expect(await spent.json()).toEqual(INSUFFICIENT_QUOTA);
    expect(spent.headers.get('retry-after')).toBeNull();
    expect((await work(proc, a, CI, 1, 1)).status).toBe(429);
    const noted = await futile(proc, 'a');
    expect(noted).toHaveLength(1);
    expect(noted[0]!.notes).toContain('futile retry (1)');
    expect(await futile(proc, 'b')).toEqual([]);
    expect(await futile(proc)).toEqual([]);
    // The same key in session b and in the default session still has its budget.
    expect((await work(proc, { header: 'b' }, CI, 1, 1)).status).toBe(200);
    expect((await work(proc, 'default', CI, 1, 1)).status).toBe(200);
    expect((await ciMeters(proc)).spend?.remaining).toBeGreaterThan(0);
  });

  test('reset and the virtual clock of a session move its meters only', async () => {
    const proc = await serve(['--clock', '2026-05-31T23:30:00Z']);
    expect((await work(proc, { header: 'a' }, CI, 90, 90)).status).toBe(200);
    expect((await work(proc, { header: 'b' }, CI, 40, 40)).status).toBe(200);
    expect((await work(proc, 'default', CI, 60, 60)).status).toBe(200);
    await expect.poll(async () => (await ciMeters(proc, 'a')).spend?.used).toBe(0.9);
    await expect.poll(async () => (await ciMeters(proc, 'b')).spend?.used).toBe(0.4);
    await expect.poll(async () => (await ciMeters(proc)).spend?.used).toBe(0.6);

    // Session a's clock moves into June: its window has drained and its month starts again.
    expect((await admin(proc, 'POST', 'clock', 'a', { advance: '1h' })).status).toBe(200);
    expect(await ciMeters(proc, 'a')).toMatchObject({ tokens: { used: 0 }, spend: { used: 0, month: '2026-06' } });
    expect(await ciMeters(proc, 'b')).toMatchObject({ tokens: { used: 40 }, spend: { used: 0.4, month: '2026-05' } });
    expect(await ciMeters(proc)).toMatchObject({ tokens: { used: 60 }, spend: { used: 0.6, month: '2026-05' } });

    // Session b's reset empties its own meters only.
    const reset = await admin(proc, 'POST', 'reset', 'b', {});
    expect(reset.status).toBe(200);
    expect(await ciMeters(proc, 'b')).toMatchObject({ tokens: { used: 0 }, spend: { used: 0 } });
    expect(await ciMeters(proc)).toMatchObject({ tokens: { used: 60 }, spend: { used: 0.6 } });
    const again = await work(proc, { header: 'b' }, CI, 100, 100);
    expect(again.status).toBe(200);
    expect(again.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
  });

  test("a session's futile retries end with it: a reset of its usage, or its end, and its first refusal after is not a retry", async () => {
    const proc = await serve();
    const spendAll = async (session?: string) =>
      expect((await admin(proc, 'POST', 'usage', session, { key: 'ci', meter: 'spend', value: 1 })).status).toBe(200);
    const refusedNotes = async (session?: string) => {
      const res = await work(proc, session === undefined ? 'default' : { header: session }, CI, 1, 1);
      expect(res.status).toBe(429);
      const entries = (await admin(proc, 'GET', 'requests?limit=1', session)).body.requests as Array<{
        notes?: string[];
      }>;
      return (entries[0]?.notes ?? []).filter((n) => n.startsWith('futile'));
    };
    for (const session of ['t2', undefined]) {
      await spendAll(session);
      expect(await refusedNotes(session)).toEqual([]);
      expect(await refusedNotes(session)).toEqual(['futile retry (1)']);
      expect((await admin(proc, 'POST', 'reset', session, {})).status).toBe(200);
      await spendAll(session);
      expect(await refusedNotes(session)).toEqual([]); // a fresh budget spent: not a retry of the old refusal
    }
    expect(await refusedNotes('t2')).toEqual(['futile retry (1)']);
    expect((await admin(proc, 'DELETE', 'sessions/t2', undefined, {})).status).toBe(200);
    await spendAll('t2');
    expect(await refusedNotes('t2')).toEqual([]); // the session named again is a fresh one
  });

  test('mockapi usage --session and mockapi requests --session show (and reset) one session of the running server', async () => {
    const proc = await serve();
    const config = `${dir.path}/mockapi.yaml`;
    expect((await work(proc, { header: 'ci-run-7' }, CI, 90, 90)).status).toBe(200);
    expect((await admin(proc, 'POST', 'usage', 'ci-run-7', { meter: 'spend', value: 1, key: 'ci' })).status).toBe(200);
    expect((await work(proc, { header: 'ci-run-7' }, CI, 1, 1)).status).toBe(429);
    expect((await work(proc, { header: 'ci-run-7' }, CI, 1, 1)).status).toBe(429);
    expect((await work(proc, 'default', CI, 5, 5)).status).toBe(200);

    const shown = await runCli(['usage', '-c', config, '--session', 'ci-run-7'], { cwd: dir.path });
    expect(shown.stderr).toBe('');
    expect(shown.code).toBe(0);
    const lines = shown.stdout.trim().split('\n');
    expect(lines[0]).toBe(`session ci-run-7 of the server at ${proc.url}`);
    expect(lines).toContain('key ci (plan tier1): 1 request; no quota');
    expect(lines).toContain('key default: meter tokens: 0 / 50 per 1m, 50 remaining');
    expect(lines).toContain('key ci: meter tokens: 90 / 100 per 1m, 10 remaining');
    expect(lines.some((l) => /^key ci: meter spend: 1 \/ 1 in \d{4}-\d\d, 0 remaining; spent$/.test(l))).toBe(true);
    const json = JSON.parse(
      (await runCli(['usage', '-c', config, '--session', 'ci-run-7', '--json'], { cwd: dir.path })).stdout,
    );
    expect(json).toMatchObject({
      session: 'ci-run-7',
      state: null,
      meters: { ci: { tokens: { used: 90 }, spend: { used: 1, remaining: 0 } } },
    });
    // The default session's own: untouched by the session's.
    const plain = JSON.parse((await runCli(['usage', '-c', config, '--no-state', '--json'], { cwd: dir.path })).stdout);
    expect(plain.meters.ci.tokens.used).toBe(5);

    const futile = await runCli(['requests', '-c', config, '--session', 'ci-run-7', '--futile'], { cwd: dir.path });
    expect(futile.code).toBe(0);
    expect(futile.stdout.trim().split('\n')).toHaveLength(1);
    expect(futile.stdout).toContain('futile retry (1)');
    expect((await runCli(['requests', '-c', config, '--futile'], { cwd: dir.path })).stdout).toBe('');
    expect(
      (await runCli(['requests', '-c', config, '--session', 'ci-run-7'], { cwd: dir.path })).stdout.trim().split('\n'),
    ).toHaveLength(3);

    // --reset empties the session's month and budgets, nothing of the default session's.
    const reset = await runCli(['usage', '-c', config, '--session', 'ci-run-7', '--reset', '--json'], {
      cwd: dir.path,
    });
    expect(reset.code).toBe(0);
    expect(JSON.parse(reset.stdout)).toMatchObject({
      session: 'ci-run-7',
      requests: 0,
      meters: { ci: { spend: { used: 0 } } },
    });
    expect((await work(proc, { header: 'ci-run-7' }, CI, 1, 1)).status).toBe(200);
    expect((await ciMeters(proc)).spend?.used).toBe(0.05);

    // A session the server does not hold is an error (reading it would make an empty one).
    const none = await runCli(['usage', '-c', config, '--session', 'nope'], { cwd: dir.path });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`the server at ${proc.url} has no session "nope"; its sessions: `);
    expect((await runCli(['requests', '-c', config, '--session', 'nope'], { cwd: dir.path })).code).toBe(1);
    const store = await runCli(['usage', '-c', config, '--session', 'ci-run-7', '--store', 'redis://127.0.0.1:1'], {
      cwd: dir.path,
    });
    expect(store.code).toBe(2);
    expect(store.stderr).toContain(
      "--session reads the session from the running server's memory: --store does not apply to it",
    );
  });
});
