// The session helper (`useMockServer({ session: true })`) gives each running test its own session:
// tests of `describe.concurrent` in one vitest file each find theirs, a node:test subtest shares its
// parent's, and every session made is dropped. With `{ config }`, node:test's reset before each test
// is not run before a subtest (it would wipe its parent's stubs).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { connectMockServer } from 'mockapi-cli/client';
import { useMockServer } from 'mockapi-cli/vitest';
import type { MockServer } from 'mockapi-cli';
import { ROOT } from '../helpers/cli.js';

const KEY = 'mk_helperKey000000000000000000001';
const CONCURRENT = 4;
let server: MockServer;
const before = process.env.MOCKAPI_URL;

beforeAll(async () => {
  const { startMockServer } = await import('mockapi-cli');
  server = await startMockServer({ config: { apiKey: KEY, endpoints: [] }, port: 0 });
  process.env.MOCKAPI_URL = server.url; // what the session helper connects to when a test starts
});
afterAll(async () => {
  if (before === undefined) delete process.env.MOCKAPI_URL;
  else process.env.MOCKAPI_URL = before;
  await server?.close();
});

/** Resolves once `count` callers have arrived: the concurrent tests all hold their sessions before any reads. */
function barrier(count: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const all = new Promise<void>((resolve) => (open = resolve));
  return () => {
    if (++arrived === count) open();
    return all;
  };
}

describe.concurrent('vitest: concurrent tests in one file', () => {
  const mock = useMockServer({ session: true });
  const stubbed = barrier(CONCURRENT);
  test.each(Array.from({ length: CONCURRENT }, (_, i) => i))('test %i finds its own session', async (i) => {
    const id = mock.id;
    await mock.stub({ method: 'GET', path: '/who', response: { body: { who: i } } });
    await stubbed();
    expect(mock.id).toBe(id);
    const res = await fetch(`${mock.url}/mock/who`, { headers: { 'x-api-key': KEY } });
    expect(await res.json()).toEqual({ who: i });
    expect(await mock.stubs()).toHaveLength(1);
  });
});

/** `node --test` on a fixture of test/fixtures/helpers/, with MOCKAPI_URL naming the server. */
function nodeTest(file: string): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const child = spawn(
      process.execPath,
      ['--test', '--test-reporter=tap', join(ROOT, 'test', 'fixtures', 'helpers', file)],
      {
        cwd: ROOT,
        env: { ...process.env, MOCKAPI_URL: server.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => done({ code, out }));
  });
}

describe('every session made is dropped', () => {
  test('the concurrent tests left no session behind', async () => {
    expect(await connectMockServer(server.url).sessions.list()).toEqual([]);
  });

  test('node:test: a subtest shares its parent session; both tests pass and leave no session', async () => {
    const run = await nodeTest('node-session.mjs');
    expect(run.out).toMatch(/# pass 3\n/);
    expect(run.code, run.out).toBe(0);
    expect(await connectMockServer(server.url).sessions.list()).toEqual([]);
  });
});

test("node:test with { config }: a subtest keeps its parent's stub, the next test starts reset", async () => {
  const run = await nodeTest('node-subtest-reset.mjs');
  expect(run.out).toMatch(/# pass 3\n/);
  expect(run.code, run.out).toBe(0);
});
