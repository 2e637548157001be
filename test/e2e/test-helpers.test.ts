// The test helpers: mockapi-cli/vitest (used here, as a user's test file would) and
// mockapi-cli/node-test (proved by running `node --test` on a small test file). One call starts a
// server on a private copy of the config, resets it before each test, closes it after all, and
// never writes the committed config (a rotation applies to the copy).
import { afterAll, describe, expect, test } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useMockServer } from 'mockapi-cli/vitest';
import { ROOT } from '../helpers/cli.js';
import { mock as call } from '../helpers/control.js';

const KEY = 'mk_vitestHelper00000000000000000001';
const YAML = `apiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /users/:id\n    response: { bodyFile: fixtures/user.json }\n`;
const dir = mkdtempSync(join(tmpdir(), 'mockapi-helper-'));
mkdirSync(join(dir, 'fixtures'));
writeFileSync(join(dir, 'fixtures', 'user.json'), '{"name":"Ada"}');
writeFileSync(join(dir, 'mockapi.yaml'), YAML);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const mock = useMockServer({ config: join(dir, 'mockapi.yaml') });
const get = (path: string, key = KEY) => call(mock.url, 'GET', `/mock${path}`, { headers: { 'x-api-key': key } });

describe('mockapi-cli/vitest', () => {
  test('serves the config (body files included) on a private copy; a rotation changes the copy only', async () => {
    expect(await get('/users/1')).toMatchObject({ status: 200, text: '{"name":"Ada"}' });
    await mock.stub({ method: 'GET', path: '/users/:id', response: { status: 503 } });
    expect((await get('/users/1')).status).toBe(503);
    expect(mock.apiKey).toBe(KEY);
    expect('apiKey' in mock).toBe(true);
    const key = await mock.rotateKey();
    expect(mock.apiKey).toBe(key); // the key the server accepts now
    expect((await get('/users/2', key)).status).toBe(503);
    expect(readFileSync(join(dir, 'mockapi.yaml'), 'utf8')).toBe(YAML);
    expect(mock.config.file).not.toBe(join(dir, 'mockapi.yaml'));
    expect(existsSync(join(dir, '.mockapi'))).toBe(false);
  });

  test("a stub's bodyFile reads the original folder's files through the copy's links, and none outside it", async () => {
    await mock.stub({ method: 'GET', path: '/me', response: { bodyFile: 'fixtures/user.json' } });
    expect(await get('/me')).toMatchObject({ status: 200, text: '{"name":"Ada"}' });
    writeFileSync(join(dir, '..', 'mockapi-helper-outside.txt'), 'outside');
    try {
      await expect(
        mock.stub({ method: 'GET', path: '/out', response: { bodyFile: '../mockapi-helper-outside.txt' } }),
      ).rejects.toThrow(/is outside the config's folder/);
    } finally {
      rmSync(join(dir, '..', 'mockapi-helper-outside.txt'), { force: true });
    }
  });

  test('each test starts reset: no stubs, an empty journal, the committed key', async () => {
    expect(mock.apiKey).toBe(KEY);
    expect(await mock.stubs()).toEqual([]);
    expect(await mock.requests()).toEqual([]);
    expect(await get('/users/1')).toMatchObject({ status: 200, text: '{"name":"Ada"}' });
  });
});

describe('mockapi-cli/node-test', () => {
  test('`node --test` on a file that uses it passes, and the committed config is left as it was', async () => {
    const folder = join(ROOT, 'test', 'fixtures', 'helpers');
    const before = readFileSync(join(folder, 'mockapi.yaml'));
    const run = await new Promise<{ code: number | null; out: string }>((done) => {
      const child = spawn(process.execPath, ['--test', '--test-reporter=tap', join(folder, 'node-helper.mjs')], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('close', (code) => done({ code, out }));
    });
    expect(run.out).toMatch(/# pass 3\n/);
    expect(run.code, run.out).toBe(0);
    expect(readFileSync(join(folder, 'mockapi.yaml')).equals(before)).toBe(true);
    expect(existsSync(join(folder, '.mockapi'))).toBe(false);
  });
});

describe('a file that connects to a shared server', () => {
  // A module hook that refuses to load the server: importing a helper must not need it (each worker of
  // a parallel run imports the helper; only `useMockServer({ config })` starts a server, in its beforeAll).
  const hook = `export async function load(url, context, next) { if (url.endsWith('/dist/mock-server.js')) throw new Error('the server was loaded'); return next(url, context); }`;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
  const importing = (path: string) =>
    spawnSync(
      process.execPath,
      [
        '--import',
        `data:text/javascript,${encodeURIComponent(register)}`,
        '--input-type=module',
        '-e',
        `await import(${JSON.stringify(path)}); console.log('ok')`,
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );

  test.each(['mockapi-cli/vitest', 'mockapi-cli/node-test', 'mockapi-cli/client'])(
    '%s does not load the server until a test starts one',
    (path) => {
      const run = importing(path);
      expect(run.stdout + run.stderr).toBe('ok\n');
    },
  );

  test('the hook sees the server when it is loaded', () => {
    expect(importing('mockapi-cli').stderr).toContain('the server was loaded');
  });
});

describe('CommonJS', () => {
  test('every export path can be required as well as imported', () => {
    const paths = ['mockapi-cli', 'mockapi-cli/client', 'mockapi-cli/vitest', 'mockapi-cli/node-test'];
    const script = `for (const p of ${JSON.stringify(paths)}) console.log(p, Object.keys(require(p)).sort().join(','))`;
    const run = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain(
      'mockapi-cli/client ControlError,DeliveryWaitTimeout,StubInvalidError,WaitTimeoutError,connectMockServer\n',
    );
    expect(run.stdout).toMatch(/^mockapi-cli .*startMockServer/m);
    expect(run.stdout).toContain('mockapi-cli/vitest PROVIDED_URL,useMockServer\n');
    expect(run.stdout).toContain('mockapi-cli/node-test useMockServer\n');
  });
});
