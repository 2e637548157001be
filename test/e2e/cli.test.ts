// The CLI as a user meets it: exit codes, the ready line, errors without stack traces, shutdown.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect, createServer } from 'node:net';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { removeDir, runCli, startServe, stopAll, tempDir, waitFor, writeConfig } from '../helpers/cli.js';

const KEY = 'mk_cliTestKey000000000000000000000';
const CONFIG = `apiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /a\n    response: { body: a }\n  - method: GET\n    path: /slow\n    delay: 400ms\n    response: { body: done }\n`;

let dir: string;
let file: string;
beforeAll(async () => {
  dir = await tempDir();
  file = await writeConfig(dir, CONFIG);
});
afterAll(async () => {
  await stopAll();
  await removeDir(dir);
});

describe('exit codes and usage errors', () => {
  test('no command prints help and exits 2', async () => {
    const res = await runCli([]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('Usage: mockapi');
  });

  test('unknown command exits 2', async () => {
    const res = await runCli(['frobnicate']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("unknown command 'frobnicate'");
  });

  test('unknown option exits 2', async () => {
    expect((await runCli(['serve', '--bogus'])).code).toBe(2);
  });

  test.each([['70000'], ['-1'], ['abc']])('--port %s exits 2', async (port) => {
    const res = await runCli(['serve', '-c', file, '--port', port]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('must be an integer from 0 to 65535');
  });

  test('--log with an unknown format exits 2', async () => {
    expect((await runCli(['serve', '-c', file, '--log', 'loud'])).code).toBe(2);
  });

  test('--help and --version exit 0', async () => {
    expect((await runCli(['--help'])).code).toBe(0);
    const version = await runCli(['--version']);
    expect(version.code).toBe(0);
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(version.stdout.trim()).toBe(pkg.version);
  });

  test('a missing config file exits 1 with one readable line, no stack trace', async () => {
    const res = await runCli(['serve', '-c', join(dir, 'missing.yaml'), '--port', '0']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('missing.yaml');
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });

  test('an invalid config exits 1 naming file, line, column and field', async () => {
    const bad = await writeConfig(
      dir,
      `apiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /a\n    failRate: 1.5\n`,
      'bad.yaml',
    );
    const res = await runCli(['serve', '-c', bad, '--port', '0']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/bad\.yaml:5:\d+: endpoints\[0\]\.failRate must be between 0 and 1, got 1\.5/);
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('serve', () => {
  test('ready line on stdout names the URL and the endpoint count', async () => {
    const s = await startServe(['-c', file, '--no-state'], { cwd: dir });
    expect(s.stdout()).toMatch(/^mockapi listening on http:\/\/127\.0\.0\.1:\d+ \(2 endpoints\)\n/);
    expect(await s.stop('SIGINT')).toBe(0);
  });

  test('a port in use is one clear line and exit 1', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    const res = await runCli(['serve', '-c', file, '--port', String(port), '--no-state'], { cwd: dir });
    blocker.close();
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toBe(
      `mockapi: port ${port} on 127.0.0.1 is already in use (try --port 0 for any free port)`,
    );
  });

  test('SIGTERM lets an in-flight request finish, then exits 0', async () => {
    const s = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: dir });
    const { port } = new URL(s.url);
    // Two pipelined requests: once /a is answered, the server has also read /slow (delay 400 ms).
    const socket = connect(Number(port), '127.0.0.1');
    let received = '';
    socket.on('data', (d) => (received += d));
    const head = `Host: 127.0.0.1\r\nX-API-Key: ${KEY}\r\n`;
    socket.write(`GET /mock/a HTTP/1.1\r\n${head}\r\nGET /mock/slow HTTP/1.1\r\n${head}Connection: close\r\n\r\n`);
    await waitFor(() => received.includes('\r\n\r\na'));
    const exit = s.stop('SIGTERM');
    await new Promise((r) => socket.once('close', r));
    expect(received.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
    expect(received.endsWith('done')).toBe(true);
    expect(await exit).toBe(0);
  });

  test('flags override the config: --host and --port', async () => {
    const s = await startServe(['-c', file, '--no-state', '--host', '127.0.0.1'], { cwd: dir });
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await s.stop();
  });
});

describe('validate and init', () => {
  test('validate: exit 0 for a valid file', async () => {
    const res = await runCli(['validate', '-c', file]);
    expect(res.code).toBe(0);
  });

  test('init writes a starter that validates and refuses to overwrite without --force', async () => {
    const target = join(dir, 'starter.yaml');
    const first = await runCli(['init', '-c', target]);
    expect(first.code).toBe(0);
    const text = await readFile(target, 'utf8');
    expect(text).toMatch(/apiKey: mk_[0-9A-Za-z]{32}/);
    expect((await runCli(['validate', '-c', target])).code).toBe(0);
    const again = await runCli(['init', '-c', target]);
    expect(again.code).toBe(1);
    expect(await readFile(target, 'utf8')).toBe(text);
    const forced = await runCli(['init', '-c', target, '--force']);
    expect(forced.code).toBe(0);
    expect(await readFile(target, 'utf8')).not.toBe(text);
  });

  test('init names the config in the serve command it prints when serve would not find it by default', async () => {
    const cwd = await tempDir();
    const named = await runCli(['init', '-c', 'api.yaml'], { cwd });
    expect(named.stdout).toBe(
      'Created api.yaml with a new API key. Start the mock with: npx mockapi-cli serve -c api.yaml\n',
    );
    expect(named.code).toBe(0);
    // The command as printed serves the file just written.
    const s = await startServe(['-c', 'api.yaml', '--no-state'], { cwd });
    expect(s.stdout()).toContain('mockapi listening on');
    expect(await s.stop()).toBe(0);

    await mkdir(join(cwd, 'my mocks'));
    const spaced = await runCli(['init', '-c', "my mocks/bob's.yaml"], { cwd });
    expect(spaced.stdout).toBe(
      "Created my mocks/bob's.yaml with a new API key. Start the mock with: npx mockapi-cli serve -c 'my mocks/bob'\\''s.yaml'\n",
    );
    // The default file, however it is spelled, needs no -c.
    for (const spelled of [[], ['-c', 'mockapi.yaml', '--force'], ['-c', join(cwd, 'mockapi.yaml'), '--force']]) {
      const plain = await runCli(['init', ...spelled], { cwd });
      expect(plain.stdout).toMatch(/ Start the mock with: npx mockapi-cli serve\n$/);
      expect(plain.code).toBe(0);
    }
  });

  test('init: a path it cannot write is named with the real cause, never a raw error code', async () => {
    const cwd = await tempDir();
    await writeFile(join(cwd, 'f'), 'a file\n');
    const underFile = await runCli(['init', '-c', 'f/x.yaml'], { cwd });
    expect(underFile.stderr).toBe(`cannot write f/x.yaml: ${join(cwd, 'f')} is a file, not a folder\n`);
    expect(underFile.code).toBe(1);
    const deeper = await runCli(['init', '-c', 'f/g/x.yaml'], { cwd });
    expect(deeper.stderr).toBe(`cannot write f/g/x.yaml: ${join(cwd, 'f')} is a file, not a folder\n`);
    const missing = await runCli(['init', '-c', 'no/x.yaml'], { cwd });
    expect(missing.stderr).toBe(`cannot write no/x.yaml: the folder ${join(cwd, 'no')} does not exist\n`);
    expect(missing.code).toBe(1);
    // /proc exists but no file can be created in it: not "does not exist".
    if (existsSync('/proc/self')) {
      const proc = await runCli(['init', '-c', '/proc/nope.yaml'], { cwd });
      expect(proc.stderr).toBe(
        'cannot write /proc/nope.yaml: the folder /proc cannot be written (no file can be created in it)\n',
      );
      expect(proc.code).toBe(1);
    }
  });
});
