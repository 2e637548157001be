// SPEC §1/§8: `mockapi requests [-c file] [--follow] [--json]` prints the running server's journal.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { spawn } from 'node:child_process';
import { BIN, runCli, startServe, stopAll, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { mock } from '../helpers/control.js';

const KEY = 'mk_requestsCmd00000000000000000001';
const dir = useTempDir('mockapi-requests-cmd-');
let config: string;
let server: ServeProcess;
beforeAll(async () => {
  config = await writeConfig(dir.path, `apiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /users/:id\n`);
});
afterAll(stopAll);

describe('mockapi requests', () => {
  test('no running server: exit 1 with a message', async () => {
    const result = await runCli(['requests', '-c', config]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no running mockapi serve of');
  });

  test('--json prints one entry per line; the default is one readable line each', async () => {
    server = await startServe(['-c', config, '--no-state', '--log', 'off']);
    await mock(server.url, 'GET', '/mock/users/1?x=2', { headers: { 'x-api-key': KEY } });
    await mock(server.url, 'GET', '/mock/users/2');
    const json = await runCli(['requests', '-c', config, '--json']);
    expect(json.code).toBe(0);
    const entries = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(entries.map((e) => [e.path, e.status, e.step, e.endpoint])).toEqual([
      ['/mock/users/1', 200, 'response', 'GET /users/:id'],
      ['/mock/users/2', 401, 'auth', null],
    ]);
    expect(json.stdout).not.toContain(KEY);
    const text = await runCli(['requests', '-c', config]);
    expect(text.stdout).toMatch(
      /^\S+Z #1 GET \/mock\/users\/1\?x=2 → 200 response \(GET \/users\/:id\) [\d.]+ ms\n\S+Z #2 GET \/mock\/users\/2 → 401 auth [\d.]+ ms — no API key\n$/,
    );
  });

  test('--follow prints new requests as they arrive and ends when the server stops', async () => {
    const child = spawn(process.execPath, [BIN, 'requests', '-c', config, '--follow', '--json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const lines = (n: number) =>
      new Promise<void>((done) => {
        const check = () => out.split('\n').filter(Boolean).length >= n && done();
        child.stdout.on('data', (d) => {
          out += d;
          check();
        });
        check();
      });
    await lines(2); // the two from before
    await mock(server.url, 'GET', '/mock/users/3', { headers: { 'x-api-key': KEY } });
    await lines(3);
    expect(JSON.parse(out.trim().split('\n')[2]!)).toMatchObject({ id: 3, path: '/mock/users/3', status: 200 });
    const exited = new Promise<number | null>((done) => child.on('exit', done));
    expect(await server.stop()).toBe(0);
    expect(await exited).toBe(0);
  });
});
