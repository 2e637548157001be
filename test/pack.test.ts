// How users get mockapi (issue 12, item 17; SPEC §6): `npm pack` the package, install the tarball
// into a fresh project, then run `npx mockapi init`, `validate` and `serve` there and import the
// library by its package name. The package is `mockapi-cli` — `mockapi` on the npm registry is an
// unrelated package — and its bin is still `mockapi`.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { request } from 'undici';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  copyPackageSources,
  runCommand,
  startCommand,
  stderrBesidesNpmConfig,
  warningsBesidesNpmConfig,
  type CommandResult,
  type RunningCommand,
} from './helpers/pack.js';

const NAME = 'mockapi-cli';
/** npm install fetches the dependencies (from the cache when it can): give it room on a busy machine. */
const INSTALL_TIMEOUT = 180_000;

let tmp = '';
let app = '';
let packed: { name: string; filename: string; files: { path: string }[] };
let install: CommandResult;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'mockapi-pack-'));
  const sources = join(tmp, 'sources');
  await copyPackageSources(sources);
  // A plain `npm pack`: its `prepack` builds dist/ first, as for `npm publish`.
  const pack = await runCommand('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: sources, timeoutMs: INSTALL_TIMEOUT });
  expect(pack.code, pack.stderr).toBe(0);
  packed = (JSON.parse(pack.stdout) as (typeof packed)[])[0]!;

  app = join(tmp, 'app');
  await mkdir(app);
  // What `npm init -y` writes, minus the noise: a CommonJS project, as most are.
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'some-app', version: '1.0.0', private: true }, null, 2));
  install = await runCommand('npm', ['install', '--save-dev', '--prefer-offline', '--no-audit', '--no-fund', join(tmp, packed.filename)], {
    cwd: app,
    timeoutMs: INSTALL_TIMEOUT,
  });
}, INSTALL_TIMEOUT * 2);

afterAll(async () => {
  if (tmp !== '') await rm(tmp, { recursive: true, force: true });
});

describe('npm pack', () => {
  test(`names the package ${NAME} and ships what an installed package needs, built`, () => {
    expect(packed.name).toBe(NAME);
    const paths = packed.files.map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'bin/mockapi.js',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/load-cli.js',
        'dist/cli.bundle.cjs',
        'schema/mockapi.schema.json',
      ]),
    );
    expect(paths.filter((p) => !/^(bin|dist|schema)\//.test(p) && !['package.json', 'README.md'].includes(p))).toEqual([]);
  });
});

describe('installing the tarball into a fresh project', () => {
  test('succeeds and prints no warning that points at mockapi', async () => {
    expect(install.code, install.stderr).toBe(0);
    // Only npm's notes about this machine's npmrc may appear (e.g. `Unknown user config "nodedir"`);
    // any other warning — an install script of ours, a deprecated or mismatched dependency, an
    // engine mismatch — is shown to every user who installs mockapi.
    expect(warningsBesidesNpmConfig(install.stderr)).toEqual([]);
    expect(install.stderr.split('\n').filter((line) => /mockapi/i.test(line))).toEqual([]);
    const manifest = JSON.parse(await readFile(join(app, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    expect(Object.keys(manifest.devDependencies)).toEqual([NAME]);
  });

  test('the installed package runs no script at install time', async () => {
    const installed = JSON.parse(await readFile(join(app, 'node_modules', NAME, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
    const atInstall = Object.keys(installed.scripts ?? {}).filter((s) => /^(pre|post)?(install|prepare)$/.test(s));
    expect(atInstall).toEqual([]);
  });

  test('npx mockapi init writes a config whose schema modeline points at the installed schema', async () => {
    const init = await runCommand('npx', ['mockapi', 'init'], { cwd: app, timeoutMs: 60_000 });
    expect(stderrBesidesNpmConfig(init.stderr)).toEqual([]);
    expect(init.stdout).toBe('Created ./mockapi.yaml with a new API key. Start the mock with: npx mockapi serve\n');
    expect(init.code).toBe(0);
    const modeline = (await readFile(join(app, 'mockapi.yaml'), 'utf8')).split('\n')[0];
    expect(modeline).toBe(`# yaml-language-server: $schema=./node_modules/${NAME}/schema/mockapi.schema.json`);
    expect(existsSync(resolve(app, `node_modules/${NAME}/schema/mockapi.schema.json`))).toBe(true);

    const validate = await runCommand('npx', ['mockapi', 'validate'], { cwd: app, timeoutMs: 60_000 });
    expect(stderrBesidesNpmConfig(validate.stderr)).toEqual([]);
    expect(validate.stdout).toBe('./mockapi.yaml is valid (3 endpoints)\n');
    expect(validate.code).toBe(0);
  });

  /** Waits for the ready line of `serve`, then checks health, the starter's GET /users with the key, and a 401 without. */
  async function expectServing(serve: RunningCommand, key: string): Promise<string> {
    const [, url] = await serve.waitForStdout(/^mockapi listening on (http:\/\/127\.0\.0\.1:\d+) \(3 endpoints\)$/m, 60_000);
    const health = await request(`${url}/__mockapi/health`);
    expect(health.statusCode).toBe(200);
    await health.body.dump();
    const users = await request(`${url}/mock/users`, { headers: { 'x-api-key': key } });
    expect(users.statusCode).toBe(200);
    expect(await users.body.json()).toEqual([
      { id: 1, name: 'Ada Lovelace' },
      { id: 2, name: 'Grace Hopper' },
    ]);
    const denied = await request(`${url}/mock/users`);
    expect(denied.statusCode).toBe(401);
    await denied.body.dump();
    return url!;
  }

  async function initKey(): Promise<string> {
    const key = /^apiKey: (\S+)$/m.exec(await readFile(join(app, 'mockapi.yaml'), 'utf8'))?.[1];
    expect(key).toMatch(/^mk_/);
    return key!;
  }

  test('npx mockapi serve answers with the new key and stops when its process group gets SIGTERM', async () => {
    const key = await initKey();
    const serve = startCommand('npx', ['mockapi', 'serve', '--port', '0'], { cwd: app, group: true });
    let url = '';
    try {
      url = await expectServing(serve, key);
    } finally {
      // To the whole group, as a terminal's Ctrl-C or a CI runner's cancel: npx runs the bin through
      // `sh -c`, which does not pass a signal sent to npx alone on to the server.
      process.kill(-serve.child.pid!, 'SIGTERM');
    }
    await serve.closed; // the server, which shares npx's stdout, has exited too
    await expect(request(`${url}/__mockapi/health`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  test('node_modules/.bin/mockapi serve stops on SIGTERM with exit 0', async () => {
    const serve = startCommand(join(app, 'node_modules', '.bin', 'mockapi'), ['serve', '--port', '0'], { cwd: app });
    try {
      await expectServing(serve, await initKey());
    } finally {
      serve.child.kill('SIGTERM');
    }
    expect(await serve.exited).toBe(0);
  });

  test(`import { startMockServer } from '${NAME}' resolves to the installed package and serves`, async () => {
    // An .mjs file: the project is CommonJS, and the package is ES modules only.
    await writeFile(
      join(app, 'check.mjs'),
      [
        `import { startMockServer } from '${NAME}';`,
        `import schema from '${NAME}/schema.json' with { type: 'json' };`,
        `const server = await startMockServer({ config: './mockapi.yaml', port: 0 });`,
        `const health = await fetch(server.url + '/__mockapi/health');`,
        `await server.close();`,
        `console.log(JSON.stringify({ resolved: import.meta.resolve('${NAME}'), health: health.status, schema: typeof schema.properties }));`,
      ].join('\n'),
    );
    const check = await runCommand(process.execPath, ['check.mjs'], { cwd: app, timeoutMs: 60_000 });
    expect(check.stderr).toBe('');
    expect(check.code).toBe(0);
    expect(JSON.parse(check.stdout)).toEqual({
      resolved: new URL(`node_modules/${NAME}/dist/index.js`, `file://${app}/`).href,
      health: 200,
      schema: 'object',
    });
    expect(existsSync(join(app, 'node_modules', NAME, 'dist', 'index.d.ts'))).toBe(true);
  });
});
