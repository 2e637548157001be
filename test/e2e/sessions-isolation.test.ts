// Proof of isolation (issue 42): one `mockapi serve`, and a user's vitest suite of 8 files × 50
// tests run on 8 parallel workers against it with `useMockServer({ session: true })`. Every test
// moves its clock, stubs the same path with its own answer (which says the session's time), creates
// an object and waits on its journal: all pass, round after round against the same server. The same suite with
// `session: false` (every test in the server's default session) fails: the control, which shows
// the suite can fail. SESSIONS_PROOF_RUNS sets how many times each file runs its 50 tests, one
// round after the other in the same workers (default 2; SESSIONS_PROOF_RUNS=20 is the full proof):
// a round costs the server and the workers their requests, not another start of 8 workers.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT, startServe, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin } from '../helpers/control.js';
import { runCommand } from '../helpers/pack.js';

const KEY = 'mk_sessionsProof0000000000000000001';
const START = '2026-06-01T00:00:00Z';
const FILES = 8;
const TESTS = 50;
const RUNS = Number(process.env.SESSIONS_PROOF_RUNS ?? 2);
const CONFIG = `apiKey: ${KEY}
endpoints: []
resources:
  customers:
    style: stripe
    path: /v1/customers
    fields: { object: customer, email: null }
    seed:
      - { id: cus_seed, email: seed@example.com }
`;

/** One file of the user's suite: TESTS tests `rounds` times, each in its own session (or all in the default one, `SESSIONS=off`). */
function suiteFile(file: number): string {
  return `import { expect, test } from 'vitest';
import { useMockServer } from 'mockapi-cli/vitest';

const mock = useMockServer({ session: process.env.SESSIONS !== 'off' });
const START = Date.parse('${START}');

for (let round = 0; round < Number(process.env.ROUNDS); round++) for (let i = 0; i < ${TESTS}; i++) {
  test('round ' + round + ' test ${file}.' + i, async () => {
    const me = '${file}-' + i;
    const headers = { 'x-api-key': '${KEY}', ...mock.headers };
    // Its clock, moved by its own amount; the same path, stubbed by every test with its own answer
    // (its name and the session's time), reached through the session's URL alone.
    await mock.clock.advance((i + 1) + 'h');
    await mock.stub({ method: 'GET', path: '/whoami', response: { body: { me, now: '\${now}' } } });
    const who = await (await fetch(mock.url + '/mock/whoami', { headers: { 'x-api-key': '${KEY}' } })).json();
    expect(who.me).toBe(me);
    const ahead = Date.parse(who.now) - START - (i + 1) * 3_600_000;
    expect(ahead).toBeGreaterThanOrEqual(0);
    expect(ahead).toBeLessThan(60_000);
    // An object of its own, and a list that holds it and the seed alone.
    const made = await fetch(mock.url + '/mock/v1/customers', { method: 'POST', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=' + me + '%40example.com' });
    expect(made.status).toBe(200);
    const list = await (await fetch(mock.url + '/mock/v1/customers', { headers })).json();
    expect(list.data.map((c) => c.email)).toEqual([me + '@example.com', 'seed@example.com']);
    // Its journal: its own requests alone (were it shared, the wait would answer with others' too).
    const seen = await mock.waitForRequests({ path: '/mock/v1/customers' }, { count: 2, timeout: '10s' });
    expect(seen.map((r) => r.method)).toEqual(['POST', 'GET']);
  });
}
`;
}

const dir = useTempDir('mockapi-sessions-proof-');
let serve: ServeProcess;
let suite = '';

/** Runs the user's suite once with vitest on 8 workers, `rounds` rounds; `sessions: false` for the control. */
function runSuite(sessions: boolean, rounds: number) {
  return runCommand(
    process.execPath,
    [join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--root', suite, '--reporter', 'dot'],
    {
      cwd: suite,
      timeoutMs: 170_000 * rounds,
      env: { MOCKAPI_URL: serve.url, SESSIONS: sessions ? 'on' : 'off', ROUNDS: String(rounds), NO_COLOR: '1' },
    },
  );
}

beforeAll(async () => {
  serve = await startServe(['-c', await writeConfig(dir.path, CONFIG), '--no-state', '--clock', START]);
  suite = join(dir.path, 'suite');
  await mkdir(join(suite, 'node_modules'), { recursive: true });
  // The package as installed (its exports, its dist/), and the user's own vitest.
  await symlink(ROOT, join(suite, 'node_modules', 'mockapi-cli'), 'dir');
  await symlink(join(ROOT, 'node_modules', 'vitest'), join(suite, 'node_modules', 'vitest'), 'dir');
  await writeFile(join(suite, 'package.json'), JSON.stringify({ name: 'proof', private: true, type: 'module' }));
  // preserveSymlinks: the package stays at node_modules/mockapi-cli, so vitest loads its dist/ as
  // it loads an installed package (natively), not through its transform as if it were the suite's source.
  await writeFile(
    join(suite, 'vitest.config.mjs'),
    `export default { resolve: { preserveSymlinks: true }, test: { include: ['*.test.mjs'], pool: 'threads', maxWorkers: ${FILES}, fileParallelism: true } };\n`,
  );
  for (let file = 0; file < FILES; file++) await writeFile(join(suite, `part${file}.test.mjs`), suiteFile(file));
}, 60_000);
afterAll(() => serve?.stop());

describe(`${FILES} parallel vitest workers × ${TESTS} tests against one server`, () => {
  test(
    `each test in its own session: all ${FILES * TESTS} pass, ${RUNS} rounds in a row`,
    async () => {
      const result = await runSuite(true, RUNS);
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toMatch(
        new RegExp(`Tests\\s+${RUNS * FILES * TESTS} passed \\(${RUNS * FILES * TESTS}\\)`),
      );
      // Every session was dropped after its test: nothing is left on the server.
      expect((await admin(serve.url, 'GET', 'sessions')).body.sessions).toEqual([]);
    },
    180_000 * RUNS,
  );

  test('the control: the same suite in the default session fails', async () => {
    const result = await runSuite(false, 1);
    expect(result.code).toBe(1);
    const failed = /Tests\s+(\d+) failed/.exec(result.stdout);
    expect(Number(failed?.[1] ?? 0), result.stdout).toBeGreaterThan((FILES * TESTS) / 2);
  }, 180_000);
});
