// Meters in one mockapi serve, black-box: config errors at their line and column, a settle that
// fails (the reserve stands, a note, the answer still sent), the virtual clock moving windows and
// months, reset, POST /__mockapi/usage for meters, and `mockapi usage`.
import { afterAll, describe, expect, test } from 'vitest';
import { runCli, startServe, stopAll, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';

afterAll(stopAll);
const dir = useTempDir('mockapi-meters-');
const KEY = 'mk_meters_test_key';

const CONFIG = [
  `apiKey: ${KEY}`,
  'limits:',
  '  meters:',
  '    tokens: { limit: 100, window: 1m }',
  '    spend: { limit: 2, window: month }',
  'endpoints:',
  '  - method: POST',
  '    path: /work',
  '    cost:',
  '      tokens: { reserve: "${body.reserve}", settle: "${response.body.used}" }',
  '      spend: "${response.body.used / 100}"',
  '    response: { body: { used: "${body.used}" } }',
  '  - method: GET',
  '    path: /free',
].join('\n');

async function serve(yaml = CONFIG, args: string[] = []): Promise<ServeProcess> {
  const config = await writeConfig(dir.path, yaml);
  return startServe(['-c', config, '--no-state', '--no-watch', '--log', 'off', ...args], { cwd: dir.path });
}

const work = (proc: ServeProcess, reserve: unknown, used: unknown) =>
  fetch(`${proc.mock}/work`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ reserve, used }),
  });

async function admin(
  proc: ServeProcess,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${proc.url}/__mockapi/${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const meters = async (proc: ServeProcess) =>
  (await admin(proc, 'GET', 'usage')).body.meters as Record<
    string,
    { used: number; remaining: number; window: string; month?: string }
  >;
const lastEntry = async (proc: ServeProcess) =>
  ((await admin(proc, 'GET', 'requests')).body.requests as Array<{ status: number; notes: string[] }>).at(-1)!;

describe('meters, one server', () => {
  test('a settle that fails keeps the reserve, notes why, and the answer is sent as it is', async () => {
    const proc = await serve();
    const res = await work(proc, 30, 'lots');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ used: 'lots' });
    await expect
      .poll(async () => (await lastEntry(proc)).notes.join('; '))
      .toContain('settle of tokens gave "lots", not a number: the reserve of 30 stands');
    expect((await lastEntry(proc)).notes.join('; ')).toContain('settle of spend gave nothing');
    expect((await meters(proc)).tokens).toMatchObject({ window: '1m', used: 30, remaining: 70 });
    // A reserve that reads nothing reserves nothing, with a note; the request goes on.
    const none = await work(proc, 'x', 5);
    expect(none.status).toBe(200);
    expect((await lastEntry(proc)).notes.join('; ')).toContain(
      'reserve of tokens gave "x", not a number: nothing reserved',
    );
    expect((await meters(proc)).tokens?.used).toBe(35);
  });

  test('a settle refunds or adds; the month counts what settled; a free endpoint asks no meter', async () => {
    const proc = await serve();
    expect((await work(proc, 50, 10)).status).toBe(200);
    await expect.poll(async () => (await meters(proc)).tokens?.used).toBe(10);
    expect((await meters(proc)).spend).toMatchObject({ window: 'month', used: 0.1, remaining: 1.9 });
    expect((await work(proc, 10, 95)).status).toBe(200);
    await expect.poll(async () => (await meters(proc)).tokens?.used).toBe(105);
    // Over the limit after a settle: nothing fits until it drains, but a free endpoint is admitted.
    const refused = await work(proc, 1, 1);
    expect(refused.status).toBe(429);
    // The rate limit's own body, word for word; the journal's note says which meter and how full.
    expect(await refused.json()).toEqual({ error: 'Too many requests', message: 'Rate limit exceeded' });
    expect((await lastEntry(proc)).notes).toEqual(['rate limited: tokens 105 of 100 tokens per 1m used, 1 asked']);
    expect(refused.headers.get('ratelimit-policy')).toBe('"tokens";q=100;w=60, "spend";q=2');
    expect((await fetch(`${proc.mock}/free`, { headers: { 'x-api-key': KEY } })).status).toBe(200);
  });

  test('a spent month answers quotaExceeded until the virtual clock reaches the next month; reset empties windows and budgets', async () => {
    const proc = await serve(CONFIG, ['--clock', '2026-05-31T23:00:00Z']);
    expect((await admin(proc, 'POST', 'usage', { meter: 'spend', value: 2 })).status).toBe(200);
    const spent = await work(proc, 1, 1);
    expect(spent.status).toBe(429);
    // The monthly quota's own body, word for word (`exhausted` defaults to quotaExceeded).
    expect(await spent.json()).toEqual({ error: 'Monthly request quota exceeded', code: 'QUOTA_EXCEEDED' });
    expect(spent.headers.get('retry-after')).toBe('3600');
    expect((await lastEntry(proc)).notes).toEqual(['spend spent: 2 of 2 spend per month']);
    expect((await work(proc, 1, 1)).status).toBe(429);
    expect((await lastEntry(proc)).notes.join('; ')).toContain('futile retry (1)');
    // The tokens window moves with the clock too.
    await admin(proc, 'POST', 'usage', { meter: 'tokens', value: 100 });
    expect((await admin(proc, 'POST', 'clock', { advance: '1h' })).status).toBe(200);
    expect((await meters(proc)).spend).toMatchObject({ used: 0, month: '2026-06' });
    expect((await meters(proc)).tokens?.used).toBe(0);
    expect((await work(proc, 1, 1)).status).toBe(200);
    await expect.poll(async () => (await meters(proc)).tokens?.used).toBe(1);
    const reset = await admin(proc, 'POST', 'reset', {});
    expect((reset.body.usage as { meters: Record<string, { used: number }> }).meters).toMatchObject({
      tokens: { used: 0 },
      spend: { used: 0 },
    });
  });

  test("an errors: template reads error.meter.message — the mock's sentence — for every refusal, insufficientQuota's (whose default body is OpenAI's) too", async () => {
    const yaml = [
      `apiKey: ${KEY}`,
      'limits:',
      '  meters:',
      '    spend: { limit: 1, window: month, exhausted: insufficientQuota }',
      '    tokens: { limit: 100, window: 1m }',
      'errors:',
      '  insufficientQuota: { status: 402, body: { said: "${error.meter.message}", name: "${error.meter.name}" } }',
      '  rateLimited: { status: 429, body: { said: "${error.meter.message}", name: "${error.meter.name}" } }',
      'endpoints:',
      '  - method: POST',
      '    path: /work',
      '    cost: { spend: "1", tokens: { reserve: "${body.reserve}" } }',
      '    response: { body: { ok: true } }',
    ].join('\n');
    const proc = await serve(yaml, ['--clock', '2026-05-31T23:00:00Z']);
    expect((await work(proc, 1, 1)).status).toBe(200);
    await expect.poll(async () => (await meters(proc)).spend?.used).toBe(1);
    const spent = await work(proc, 1, 1);
    expect([spent.status, await spent.json()]).toEqual([
      402,
      {
        said: 'The spend budget of 1 per month is spent (1 used). Waiting does not help: it must be raised or reset.',
        name: 'spend',
      },
    ]);
    await admin(proc, 'POST', 'usage', { meter: 'spend', value: 0 });
    const full = await work(proc, 100, 1);
    expect(full.status).toBe(429);
    const said = (await full.json()) as { said: string; name: string };
    expect(said.name).toBe('tokens');
    expect(said.said).toMatch(
      /^Rate limit reached on tokens per 1m: Limit 100, Used 1, Requested 100\. Please try again in [\d.]+s\.$/,
    );
  });

  test('POST /__mockapi/usage for meters: unknown meter or key 404, bad values 400', async () => {
    const proc = await serve();
    expect(await admin(proc, 'POST', 'usage', { meter: 'nope', value: 1 })).toEqual({
      status: 404,
      body: {
        error: 'not_found',
        message: 'the key "default" has no meter named "nope"; its meters are "tokens", "spend"',
      },
    });
    expect((await admin(proc, 'POST', 'usage', { meter: 'tokens', value: -1 })).status).toBe(400);
    expect((await admin(proc, 'POST', 'usage', { meter: 'tokens', value: 'a' })).status).toBe(400);
    expect((await admin(proc, 'POST', 'usage', { meter: 'tokens', value: 1, key: 'ci' })).status).toBe(404);
    expect((await admin(proc, 'POST', 'usage', { meter: 'tokens', value: 42.5 })).body.meters).toMatchObject({
      tokens: { used: 42.5, remaining: 57.5 },
    });
  });

  test('POST /__mockapi/usage {meter, value} without key sets the one key whose plan has the meter; several: 400 naming them', async () => {
    const plans = [
      `apiKey: ${KEY}`,
      'plans:',
      '  tier1:',
      '    rateLimit: { requests: 500, window: 1m }',
      '    meters:',
      '      tokens: { limit: 30000, window: 1m }',
      '      spend: { limit: 5.00, window: month, exhausted: insufficientQuota }',
      'keys:',
      '  - { name: t1, key: sk_t1_0000000000000000, plan: tier1 }',
      'endpoints:',
      '  - method: POST',
      '    path: /v1/chat/completions',
      '    cost:',
      '      spend: "${response.body.usage.total_tokens * 0.000002}"',
      '    response: { body: { usage: { total_tokens: 10000 } } }',
    ];
    const proc = await serve(plans.join('\n'));
    const chat = () =>
      fetch(`${proc.mock}/v1/chat/completions`, { method: 'POST', headers: { 'x-api-key': 'sk_t1_0000000000000000' } });
    // The contract's own call, on its own example: the meter is on a plan, and one key has it.
    const set = await admin(proc, 'POST', 'usage', { meter: 'spend', value: 4.99 });
    expect(set.status).toBe(200);
    expect((set.body.keys as Record<string, { meters: Record<string, { used: number }> }>).t1!.meters.spend!.used).toBe(
      4.99,
    );
    expect((await chat()).status).toBe(200); // 4.99 + 0.02 settles over the limit: spent now
    const spent = await chat();
    expect(spent.status).toBe(429);
    expect(((await spent.json()) as { error: { code: string } }).error.code).toBe('insufficient_quota');
    await proc.stop();
    const two = await serve(
      plans
        .join('\n')
        .replace('plan: tier1 }', 'plan: tier1 }\n  - { name: t2, key: sk_t2_0000000000000000, plan: tier1 }'),
    );
    expect(await admin(two, 'POST', 'usage', { meter: 'spend', value: 1 })).toEqual({
      status: 400,
      body: {
        error: 'bad_request',
        message: 'the keys "t1", "t2" each have a meter named "spend": say which with "key"',
      },
    });
    expect((await admin(two, 'POST', 'usage', { meter: 'spend', value: 1, key: 't2' })).status).toBe(200);
    expect((await admin(two, 'POST', 'usage', { meter: 'nope', value: 1 })).status).toBe(404);
    await two.stop();
  });

  test('mockapi usage shows every meter of the running server', async () => {
    const proc = await serve();
    await admin(proc, 'POST', 'usage', { meter: 'spend', value: 0.25 });
    const shown = await runCli(['usage', '-c', `${dir.path}/mockapi.yaml`, '--no-state'], { cwd: dir.path });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('meter tokens: 0 / 100 per 1m, 100 remaining');
    expect(shown.stdout).toMatch(/meter spend: 0\.25 \/ 2 in \d{4}-\d\d, 1\.75 remaining/);
    const json = await runCli(['usage', '-c', `${dir.path}/mockapi.yaml`, '--no-state', '--json'], { cwd: dir.path });
    expect(JSON.parse(json.stdout).meters.default.spend).toMatchObject({ window: 'month', limit: 2, used: 0.25 });
    await proc.stop();
  });
});

describe('bad meters and costs are config errors at their line and column', () => {
  const cases: Array<[string, string, RegExp]> = [
    [
      'a negative limit',
      '    tokens: { limit: -5, window: 1m }',
      /mockapi\.yaml:4:22: limits\.meters\.tokens\.limit must be > 0, got -5/,
    ],
    [
      'a non-numeric limit',
      '    tokens: { limit: lots, window: 1m }',
      /mockapi\.yaml:4:22: limits\.meters\.tokens\.limit must be a number, got "lots"/,
    ],
    [
      'an unknown window',
      '    tokens: { limit: 5, window: 1week }',
      /mockapi\.yaml:4:33: limits\.meters\.tokens\.window must be a duration .*, month or total/,
    ],
    [
      'exhausted on a sliding window',
      '    tokens: { limit: 5, window: 1m, exhausted: insufficientQuota }',
      /mockapi\.yaml:4:48: limits\.meters\.tokens\.exhausted only means something for a meter whose window is month or total/,
    ],
  ];
  test.each(cases)('%s', async (_what, line, expected) => {
    const config = await writeConfig(
      dir.path,
      [`apiKey: ${KEY}`, 'limits:', '  meters:', line, 'endpoints:', '  - { method: GET, path: /a }'].join('\n'),
      'bad.yaml',
    );
    const result = await runCli(['validate', '-c', config]);
    expect(result.code).toBe(1);
    expect(result.stderr.replace(/.*bad\.yaml/g, 'mockapi.yaml')).toMatch(expected);
  });

  test('a cost on an unknown meter, a negative or non-numeric cost, a random or unparsable expression', async () => {
    const config = await writeConfig(
      dir.path,
      [
        `apiKey: ${KEY}`,
        'limits:',
        '  meters:',
        '    tokens: { limit: 5, window: 1m }',
        'endpoints:',
        '  - method: POST',
        '    path: /a',
        '    cost:',
        '      tokenz: 1',
        '      tokens: { reserve: -2, settle: "abc" }',
        '  - method: POST',
        '    path: /b',
        '    cost: { tokens: { reserve: "${randomInt(1, 2)}", settle: "${response.body.n *}" } }',
        '  - method: POST',
        '    path: /c',
        '    cost: { tokens: { reserve: "${response.body.n}" } }',
      ].join('\n'),
      'costs.yaml',
    );
    const result = await runCli(['validate', '-c', config]);
    expect(result.code).toBe(1);
    const lines = result.stderr.split('\n').map((l) => l.replace(/^.*costs\.yaml:/, ''));
    expect(lines.filter((l) => l !== '')).toEqual([
      '9:7: endpoints[0].cost.tokenz names no meter of limits.meters or of a plan (meters: tokens)',
      '10:26: endpoints[0].cost.tokens.reserve must be at least 0, got -2',
      '10:38: endpoints[0].cost.tokens.settle must be a number of 0 or more, or a ${…} expression, got "abc"',
      '13:32: endpoints[1].cost.tokens.reserve cannot draw random values (uuid, randomInt, fake.*): a cost must be the same for the same request',
      '13:82: endpoints[1].cost.tokens.settle unexpected `}`; expected a value',
      '16:35: endpoints[2].cost.tokens.reserve `response` can only be read in the `data` of a `send` and in the `settle` of a `cost`',
    ]);
  });
});
