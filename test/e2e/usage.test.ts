import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runUsage, type UsageOptions } from '../../src/cli/commands/usage.js';
import { formatIssue, loadConfig } from '../../src/config/load.js';
import { registerServer } from '../../src/state/registry.js';
import { runCli, startServe } from '../helpers/cli.js';

const NOV = Date.parse('2026-11-15T12:00:00Z');
const clock = () => NOV;
const stateText = (month: string, requests: number) =>
  `${JSON.stringify({ version: 1, usage: { month, requests } })}\n`;

function configText(limits: string): string {
  return [
    'project: usage-test',
    'apiKey: mk_usageTest000000000000000000000',
    limits,
    'endpoints:',
    '  - method: GET',
    '    path: /ping',
    '',
  ].join('\n');
}

let dir: string;
let config: string;
let stateFile: string;

async function run(opts: Omit<UsageOptions, 'config'> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runUsage({ config, ...opts }, { out: (l) => out.push(l), err: (l) => err.push(l) }, clock);
  return { code, out, err };
}

async function writeState(text: string, file = stateFile) {
  await mkdir(join(file, '..'), { recursive: true });
  await writeFile(file, text);
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mockapi-usage-'));
  config = join(dir, 'mockapi.yaml');
  stateFile = join(dir, '.mockapi', 'state.json');
  await writeFile(config, configText('limits:\n  monthlyQuota: 100'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('mockapi usage', () => {
  it("shows this month's count, the quota and what remains", async () => {
    await writeState(stateText('2026-11', 42));
    expect(await run()).toEqual({
      code: 0,
      out: ['2026-11 (UTC): 42 requests', 'quota: 100 a month, 58 remaining'],
      err: [],
    });
  });

  it('prints one JSON object with --json', async () => {
    await writeState(stateText('2026-11', 42));
    const { code, out, err } = await run({ json: true });
    expect(code).toBe(0);
    expect(err).toEqual([]);
    expect(out).toHaveLength(1);
    expect(JSON.parse(out[0]!)).toEqual({
      month: '2026-11',
      requests: 42,
      quota: 100,
      remaining: 58,
      state: stateFile,
    });
  });

  it('shows 0 when nothing was counted yet, and says so', async () => {
    expect(await run()).toEqual({
      code: 0,
      out: ['2026-11 (UTC): 0 requests', 'quota: 100 a month, 100 remaining'],
      err: [`no usage state at ${stateFile} yet: nothing was counted`],
    });
    await expect(readdir(dir)).resolves.toEqual(['mockapi.yaml']); // showing writes nothing
  });

  it('shows 0 when the state holds a previous month', async () => {
    await writeState(stateText('2026-10', 100));
    const { out } = await run({ json: true });
    expect(JSON.parse(out[0]!)).toEqual({
      month: '2026-11',
      requests: 0,
      quota: 100,
      remaining: 100,
      state: stateFile,
    });
  });

  it('shows 0 when the state holds a later month (a future --clock left it), and says so', async () => {
    await writeState(stateText('2027-03', 5));
    expect(await run({ json: true })).toEqual({
      code: 0,
      out: [JSON.stringify({ month: '2026-11', requests: 0, quota: 100, remaining: 100, state: stateFile })],
      err: [
        `usage state ${stateFile} holds 2027-03 (5 requests), a later month than now (2026-11); mockapi serve moves it aside when it next starts, and counts 2026-11 from 0`,
      ],
    });
    expect(await readFile(stateFile, 'utf8')).toBe(stateText('2027-03', 5));
  });

  it('says when the quota is used up and when it comes back', async () => {
    await writeState(stateText('2026-11', 130));
    expect((await run()).out).toEqual([
      '2026-11 (UTC): 130 requests',
      'quota: 100 a month, 0 remaining',
      'quota used up: requests get 429 until 2026-12-01 00:00 UTC',
    ]);
  });

  it('reports null quota and remaining without a monthlyQuota', async () => {
    await writeFile(config, configText('limits: {}'));
    await writeState(stateText('2026-11', 1));
    expect(JSON.parse((await run({ json: true })).out[0]!)).toEqual({
      month: '2026-11',
      requests: 1,
      quota: null,
      remaining: null,
      state: stateFile,
    });
    expect((await run()).out).toEqual(['2026-11 (UTC): 1 request', 'quota: none (limits.monthlyQuota is not set)']);
  });

  it('reads a --state file instead of .mockapi/state.json', async () => {
    const custom = join(dir, 'elsewhere', 'usage.json');
    await writeState(stateText('2026-11', 7), custom);
    await writeState(stateText('2026-11', 99));
    const { out } = await run({ state: custom, json: true });
    expect(JSON.parse(out[0]!)).toMatchObject({ requests: 7, remaining: 93, state: custom });
  });

  it('with --no-state says nothing is persisted', async () => {
    await writeState(stateText('2026-11', 42));
    expect(await run({ state: false })).toEqual({
      code: 0,
      out: ['2026-11 (UTC): 0 requests', 'quota: 100 a month, 100 remaining'],
      err: ['--no-state: usage is kept in the memory of a running server only; nothing is persisted'],
    });
    const { out } = await run({ state: false, json: true });
    expect(JSON.parse(out[0]!)).toEqual({ month: '2026-11', requests: 0, quota: 100, remaining: 100, state: null });
  });

  it('refuses to show a corrupt state, and leaves it as it is', async () => {
    await writeState('{"version":1');
    expect(await run()).toEqual({
      code: 1,
      out: [],
      err: [
        `usage state ${stateFile} is corrupt (not valid JSON)`,
        'mockapi serve moves it aside and starts at 0 when it next starts; mockapi usage --reset does the same now',
      ],
    });
    expect(await readFile(stateFile, 'utf8')).toBe('{"version":1');
  });

  it('fails with the config issues when the config is invalid', async () => {
    await writeFile(config, configText('limits:\n  monthlyQuota: 0'));
    const loaded = await loadConfig(config);
    expect(loaded.ok).toBe(false);
    const expected = loaded.ok ? [] : loaded.issues.map(formatIssue);
    expect(expected.length).toBeGreaterThan(0);
    expect(await run()).toEqual({ code: 1, out: [], err: expected });
  });

  describe('--reset', () => {
    it('zeroes this month atomically and says so', async () => {
      await writeState(stateText('2026-11', 42));
      expect(await run({ reset: true })).toEqual({
        code: 0,
        out: [`Usage for 2026-11 reset to 0 (was 42) in ${stateFile}`],
        err: [],
      });
      expect(await readFile(stateFile, 'utf8')).toBe(stateText('2026-11', 0));
      expect((await run()).out[0]).toBe('2026-11 (UTC): 0 requests');
    });

    it('prints the usage after the reset with --json', async () => {
      await writeState(stateText('2026-11', 42));
      const { code, out } = await run({ reset: true, json: true });
      expect(code).toBe(0);
      expect(JSON.parse(out[0]!)).toEqual({
        month: '2026-11',
        requests: 0,
        quota: 100,
        remaining: 100,
        state: stateFile,
      });
    });

    it('creates .mockapi/ with its .gitignore when there was no state', async () => {
      const { code, out } = await run({ reset: true });
      expect(code).toBe(0);
      expect(out).toEqual([`Usage for 2026-11 reset to 0 (was 0) in ${stateFile}`]);
      expect((await readdir(join(dir, '.mockapi'))).sort()).toEqual(['.gitignore', 'state.json']);
    });

    it('sets a corrupt state aside before writing', async () => {
      await writeState('garbage');
      const aside = `${stateFile}.corrupt-2026-11-15T12-00-00-000Z`;
      expect(await run({ reset: true })).toEqual({
        code: 0,
        out: [`Usage for 2026-11 reset to 0 (was 0) in ${stateFile}`],
        err: [`usage state ${stateFile} was corrupt (not valid JSON); moved it to ${aside}`],
      });
      expect(await readFile(aside, 'utf8')).toBe('garbage');
      expect(await readFile(stateFile, 'utf8')).toBe(stateText('2026-11', 0));
    });

    it("sets a later month's state aside before writing, instead of writing over it", async () => {
      await writeState(stateText('2027-03', 5));
      const aside = `${stateFile}.later-month-2026-11-15T12-00-00-000Z`;
      expect(await run({ reset: true })).toEqual({
        code: 0,
        out: [`Usage for 2026-11 reset to 0 (was 0) in ${stateFile}`],
        err: [
          `usage state ${stateFile} holds 2027-03 (5 requests), a later month than now (2026-11); moved it to ${aside}`,
        ],
      });
      expect(await readFile(aside, 'utf8')).toBe(stateText('2027-03', 5));
      expect(await readFile(stateFile, 'utf8')).toBe(stateText('2026-11', 0));
    });

    it('names the running servers of this config that were started with --no-watch', async () => {
      const watching = await registerServer(join(dir, 'mockapi.yaml'), { url: 'http://127.0.0.1:4101', watch: true });
      const unwatched = await registerServer(join(dir, 'mockapi.yaml'), { url: 'http://127.0.0.1:4102', watch: false });
      try {
        expect((await run({ reset: true })).err).toEqual([
          'note: the mockapi serve at http://127.0.0.1:4102 runs with --no-watch: it takes the reset at its next write, or when it next refuses a request over the quota',
        ]);
      } finally {
        await watching();
        await unwatched();
      }
    });

    it('has nothing to reset with --no-state', async () => {
      expect(await run({ reset: true, state: false })).toEqual({
        code: 0,
        out: ['2026-11 (UTC): 0 requests', 'quota: 100 a month, 100 remaining'],
        err: ['--no-state: usage is kept in the memory of a running server only; nothing is persisted to reset'],
      });
      await expect(readdir(dir)).resolves.toEqual(['mockapi.yaml']);
    });
  });
});

describe('mockapi usage shows the rate window', () => {
  it('says the limit, and that the window lives in a running server, when none runs', async () => {
    await writeFile(config, configText('limits:\n  monthlyQuota: 100\n  rateLimit: { requests: 5, window: 1m }'));
    expect((await run()).out).toEqual([
      '2026-11 (UTC): 0 requests',
      'quota: 100 a month, 100 remaining',
      'rate limit: 5 requests per 1m; no server of this config runs (the window is kept by a running server)',
    ]);
    // --json keeps its documented fields only
    expect(Object.keys(JSON.parse((await run({ json: true })).out[0]!))).toEqual([
      'month',
      'requests',
      'quota',
      'remaining',
      'state',
    ]);
  });

  it('reads the running server: its live count (nothing in the file yet) and how full the window is now', async () => {
    await writeFile(config, configText('limits:\n  rateLimit: { requests: 3, window: 1h }'));
    const server = await startServe(['-c', config, '--no-state', '--log', 'off'], { cwd: dir });
    try {
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${server.url}/mock/ping`, {
          headers: { 'x-api-key': 'mk_usageTest000000000000000000000' },
        });
        expect(res.status).toBe(200);
      }
      const shown = await runCli(['usage', '-c', config], { cwd: dir });
      expect(shown.code).toBe(0);
      expect(shown.stdout.split('\n')).toEqual([
        // --no-state: the server never writes a file, so only its live count can say 3.
        `${new Date().toISOString().slice(0, 7)} (UTC): 3 requests`,
        'quota: none (limits.monthlyQuota is not set)',
        expect.stringMatching(
          new RegExp(
            `^rate limit: 3 requests per 1h; 3 used in the window now, 0 remaining \\(server at ${server.url.replace(/[.]/g, '\\.')}\\); full: a slot frees in \\d+ s$`,
          ),
        ),
        '',
      ]);
    } finally {
      await server.stop();
    }
  });

  it('right after a request, the count includes it, for apiKey and for a key of keys:, text and --json', async () => {
    await writeFile(
      config,
      configText('keys:\n  - { name: ci, key: sk_test_ci_usage00000000000000000 }\nlimits:\n  monthlyQuota: 100'),
    );
    // --no-watch and a state file that is written at most once a second: read at once, the file lags.
    const server = await startServe(['-c', config, '--log', 'off', '--no-watch'], { cwd: dir });
    try {
      for (const key of [
        'mk_usageTest000000000000000000000',
        'sk_test_ci_usage00000000000000000',
        'sk_test_ci_usage00000000000000000',
      ]) {
        const res = await fetch(`${server.url}/mock/ping`, { headers: { 'x-api-key': key } });
        expect(res.status).toBe(200);
      }
      const month = new Date().toISOString().slice(0, 7);
      const shown = await runCli(['usage', '-c', config], { cwd: dir });
      expect(shown.stdout.split('\n').slice(0, 3)).toEqual([
        `${month} (UTC): 1 request`,
        'quota: 100 a month, 99 remaining',
        'key ci: 2 requests; quota 100 a month, 98 remaining',
      ]);
      const json = await runCli(['usage', '-c', config, '--json'], { cwd: dir });
      expect(JSON.parse(json.stdout)).toMatchObject({
        month,
        requests: 1,
        remaining: 99,
        keys: { default: { requests: 1 }, ci: { requests: 2, remaining: 98 } },
      });
    } finally {
      await server.stop();
    }
  });
});
