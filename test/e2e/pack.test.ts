// How users get mockapi (issue 12, item 17; SPEC §6): the package as the README makes it
// (`npm ci`, `npm run pack` in a copy of the checkout: test/helpers/packed.ts, shared with
// docs-commands.test.ts), and as a release packs it (`npm run -s pack -- <folder>`); the tarball
// installed into a fresh project, then `npx mockapi init`, `validate` and `serve` there and the
// library imported by its package name. The package is `mockapi-cli` — `mockapi` on the npm
// registry is an unrelated package — and its bin is still `mockapi`.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { request } from 'undici';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ROOT } from '../helpers/cli.js';
import { copyExample, linkFromCheckout, runNodeTests, runPlaywright, runVitest } from '../helpers/session-examples.js';
import { packedCheckout } from '../helpers/packed.js';
import {
  runCommand,
  startCommand,
  stderrBesidesNpmConfig,
  warningsBesidesNpmConfig,
  type CommandResult,
  type RunningCommand,
} from '../helpers/pack.js';

const NAME = 'mockapi-cli';
/** npm install fetches the dependencies (from the cache when it can): give it room on a busy machine. */
const INSTALL_TIMEOUT = 180_000;

let tmp = '';
let sources = '';
let app = '';
let pack: CommandResult;
/** Where `npm run -s pack -- <folder>` was told to put the tarball. */
let packedInto = '';
let tarball = '';
/** The tarball's entries (`package/…`) and its package.json, as written. */
let packedPaths: string[] = [];
let packedManifest = '';
let install: CommandResult;

beforeAll(async () => {
  // The README's checkout, after `npm ci` and `npm run pack`; someone served an example over HTTPS
  // there, so its CA and the CA's private key sit under examples/ (a shipped folder). Neither may
  // reach the package.
  const packed = await packedCheckout();
  sources = packed.checkout;
  expect(existsSync(join(sources, 'examples', 'look-alike', 'payments', '.mockapi', 'tls', 'ca-key.pem'))).toBe(true);
  tmp = await mkdtemp(join(packed.root, 'pack-'));
  // As a release runs it (`npm publish "$(npm run -s pack)"`), into <folder>: npm runs the
  // `prepack` guard first, which must let its own `npm run pack` through.
  pack = packed.release;
  packedInto = packed.releaseDir;
  expect(pack.code, pack.stderr).toBe(0);
  tarball = pack.stdout.trim();
  const list = await runCommand('tar', ['-tzf', tarball], { cwd: tmp, timeoutMs: 60_000 });
  expect(list.code, list.stderr).toBe(0);
  packedPaths = list.stdout.split('\n').filter((line) => line !== '');
  const manifest = await runCommand('tar', ['-xzOf', tarball, 'package/package.json'], { cwd: tmp, timeoutMs: 60_000 });
  expect(manifest.code, manifest.stderr).toBe(0);
  packedManifest = manifest.stdout;

  app = join(tmp, 'app');
  await mkdir(app);
  // What `npm init -y` writes, minus the noise: a CommonJS project, as most are.
  await writeFile(
    join(app, 'package.json'),
    JSON.stringify({ name: 'some-app', version: '1.0.0', private: true }, null, 2),
  );
  install = await runCommand('npm', ['install', '--save-dev', '--prefer-offline', '--no-audit', '--no-fund', tarball], {
    cwd: app,
    timeoutMs: INSTALL_TIMEOUT,
  });
}, INSTALL_TIMEOUT * 5);

afterAll(async () => {
  if (tmp !== '') await rm(tmp, { recursive: true, force: true });
});

describe('npm run pack', () => {
  test('prints only the path of the tarball it wrote', async () => {
    const version = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    expect(pack.stdout).toBe(`${join(packedInto, `${NAME}-${version}.tgz`)}\n`);
    expect(existsSync(tarball)).toBe(true);
  });

  test('ships what an installed package needs, built, and nothing else', () => {
    const paths = packedPaths.map((p) => p.replace(/^package\//, ''));
    expect(paths).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'LICENSE',
        'docs/README.md',
        'examples/basic/mockapi.yaml',
        'bin/mockapi.js',
        'bin/package.json',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/cli/load-cli.cjs',
        'dist/cli/cli.bundle.cjs',
        'dist/verify/mock-thread.bundle.cjs',
        'schema/mockapi.schema.json',
      ]),
    );
    expect(
      paths.filter(
        (p) =>
          !/^(bin|dist|schema|docs|examples)\//.test(p) &&
          !['package.json', 'README.md', 'CONTRIBUTING.md', 'LICENSE'].includes(p),
      ),
    ).toEqual([]);
  });

  test("no key ships: a project's .mockapi/ (its CA key, its state) beside a shipped example stays out", () => {
    expect(packedPaths.filter((p) => /(^|\/)\.mockapi\/|\.pem$|\.key$/.test(p))).toEqual([]);
  });

  test('ships the MIT license of "mockapi contributors", as package.json says', async () => {
    const license = await runCommand('tar', ['-xzOf', tarball, 'package/LICENSE'], { cwd: tmp, timeoutMs: 60_000 });
    expect(license.stdout).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} mockapi contributors\n/);
    expect((JSON.parse(packedManifest) as { license: string }).license).toBe('MIT');
  });

  test('installs a `mockapi-cli` bin beside `mockapi` (the name `npx mockapi-cli` runs before install)', () => {
    const packed = JSON.parse(packedManifest) as { bin: Record<string, string> };
    expect(packed.bin).toEqual({ mockapi: 'bin/mockapi.js', 'mockapi-cli': 'bin/mockapi.js' });
  });

  test('the Redis client is an optional peer dependency, not a dependency', () => {
    const packed = JSON.parse(packedManifest) as Record<string, Record<string, unknown>>;
    expect(packed.dependencies).not.toHaveProperty('@redis/client');
    expect(packed).not.toHaveProperty('optionalDependencies');
    expect(packed.peerDependencies).toHaveProperty('@redis/client');
    expect(packed.peerDependenciesMeta).toMatchObject({ '@redis/client': { optional: true } });
    for (const meta of Object.values(packed.peerDependenciesMeta as Record<string, { optional?: boolean }>))
      expect(meta.optional).toBe(true); // vitest too: only the vitest helper needs it
  });

  test('a plain npm pack in the checkout refuses (it would ship the install-time prepare script) and points to npm run pack', async () => {
    const plain = await runCommand('npm', ['pack', '--dry-run'], { cwd: sources, timeoutMs: 60_000 });
    expect(plain.code).not.toBe(0);
    expect(plain.stderr).toContain(
      "mockapi-cli is packed from a staged package without build scripts: run `npm run pack` (it prints the tarball's path), not `npm pack`",
    );
  });

  test(`ships the repository's package.json — named ${NAME} — without scripts (no prepare) and without devDependencies`, async () => {
    const packed = JSON.parse(packedManifest) as Record<string, unknown>;
    expect(packed.name).toBe(NAME);
    expect(packed).not.toHaveProperty('scripts');
    expect(packed).not.toHaveProperty('devDependencies');
    // Everything else byte for byte, in the repository's two-space layout.
    const { scripts, devDependencies, ...rest } = JSON.parse(
      await readFile(join(ROOT, 'package.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(scripts).toHaveProperty('prepare', 'npm run build');
    expect(devDependencies).toBeDefined();
    expect(packedManifest).toBe(`${JSON.stringify(rest, null, 2)}\n`);
  });

  test('npm publish in the checkout refuses and points to the staged release', async () => {
    // --dry-run: were the guard gone, nothing would be uploaded; prepublishOnly runs before packing.
    const publish = await runCommand('npm', ['publish', '--dry-run'], { cwd: sources, timeoutMs: 60_000 });
    expect(publish.code).not.toBe(0);
    expect(publish.stderr).toContain(
      'mockapi-cli is published from a staged package without build scripts: npm publish "$(npm run -s pack)"',
    );
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
    const manifest = JSON.parse(await readFile(join(app, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    expect(Object.keys(manifest.devDependencies)).toEqual([NAME]);
  });

  test('does not install the Redis client (only a shared store needs it)', () => {
    expect(existsSync(join(app, 'node_modules', '@redis', 'client'))).toBe(false);
  });

  test('the installed package runs no script at install time', async () => {
    const installed = JSON.parse(await readFile(join(app, 'node_modules', NAME, 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
    };
    const atInstall = Object.keys(installed.scripts ?? {}).filter((s) => /^(pre|post)?(install|prepare)$/.test(s));
    expect(atInstall).toEqual([]);
  });

  test('npx mockapi init writes a config whose schema modeline points at the installed schema', async () => {
    const init = await runCommand('npx', ['mockapi', 'init'], { cwd: app, timeoutMs: 60_000 });
    expect(stderrBesidesNpmConfig(init.stderr)).toEqual([]);
    expect(init.stdout).toBe('Created ./mockapi.yaml with a new API key. Start the mock with: npx mockapi-cli serve\n');
    expect(init.code).toBe(0);
    const modeline = (await readFile(join(app, 'mockapi.yaml'), 'utf8')).split('\n')[0];
    expect(modeline).toBe(`# yaml-language-server: $schema=./node_modules/${NAME}/schema/mockapi.schema.json`);
    expect(existsSync(resolve(app, `node_modules/${NAME}/schema/mockapi.schema.json`))).toBe(true);

    const validate = await runCommand('npx', ['mockapi', 'validate'], { cwd: app, timeoutMs: 60_000 });
    expect(stderrBesidesNpmConfig(validate.stderr)).toEqual([]);
    expect(validate.stdout).toBe('./mockapi.yaml is valid (3 endpoints)\n');
    expect(validate.code).toBe(0);
  });

  test('the shipped examples point at the installed schema, so a copy at the project root is checked by editors', async () => {
    const examples = join(app, 'node_modules', NAME, 'examples');
    const modelines = new Map<string, string>();
    for (const file of (await readdir(examples, { recursive: true })).filter((f) => f.endsWith('.yaml'))) {
      const line = (await readFile(join(examples, file), 'utf8'))
        .split('\n')
        .find((l) => l.startsWith('# yaml-language-server:'));
      if (line !== undefined) modelines.set(file, line);
    }
    expect(modelines.size).toBeGreaterThanOrEqual(10);
    for (const line of modelines.values())
      expect(line).toBe(`# yaml-language-server: $schema=./node_modules/${NAME}/schema/mockapi.schema.json`);
    // As the docs say: copy one to the project's root; its schema path leads to the installed schema.
    const copied = await readFile(join(examples, 'flaky', 'mockapi.yaml'), 'utf8');
    const ref = /\$schema=(\S+)/.exec(copied)![1]!;
    expect(existsSync(resolve(app, ref))).toBe(true);
  });

  /** Waits for the ready line of `serve`, then checks health, the starter's GET /users with the key, and a 401 without. */
  async function expectServing(serve: RunningCommand, key: string): Promise<string> {
    const [, url] = await serve.waitForStdout(
      /^mockapi listening on (http:\/\/127\.0\.0\.1:\d+) \(3 endpoints\)$/m,
      60_000,
    );
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

describe("a newcomer's first commands, as the README writes them", () => {
  let dir = '';

  beforeAll(async () => {
    // A folder of its own inside the app: the app's own mockapi.yaml is the other tests'.
    dir = join(app, 'newcomer');
    await mkdir(dir, { recursive: true });
  });

  test('npx mockapi-cli init, npx mockapi-cli serve on port 0, and the generated key gets 200', async () => {
    const init = await runCommand('npx', ['mockapi-cli', 'init'], { cwd: dir, timeoutMs: 60_000 });
    expect(stderrBesidesNpmConfig(init.stderr)).toEqual([]);
    expect(init.stdout).toBe('Created ./mockapi.yaml with a new API key. Start the mock with: npx mockapi-cli serve\n');
    expect(init.code).toBe(0);
    const key = /^apiKey: (\S+)$/m.exec(await readFile(join(dir, 'mockapi.yaml'), 'utf8'))?.[1];
    expect(key).toMatch(/^mk_[0-9A-Za-z]{32}$/);

    const serve = startCommand('npx', ['mockapi-cli', 'serve', '--port', '0'], { cwd: dir, group: true });
    try {
      const [, url] = await serve.waitForStdout(
        /^mockapi listening on (http:\/\/127\.0\.0\.1:\d+) \(3 endpoints\)$/m,
        60_000,
      );
      const users = await request(`${url}/mock/users`, { headers: { 'x-api-key': key! } });
      expect(users.statusCode).toBe(200);
      await users.body.dump();
    } finally {
      process.kill(-serve.child.pid!, 'SIGTERM');
    }
    await serve.closed;
  });

  test("require('mockapi-cli') and require('mockapi-cli/client') work from CommonJS (Jest, older tools)", async () => {
    await writeFile(
      join(dir, 'check.cjs'),
      [
        `const { startMockServer } = require('${NAME}');`,
        `const { connectMockServer } = require('${NAME}/client');`,
        `(async () => {`,
        `  const server = await startMockServer({ config: './mockapi.yaml', port: 0 });`,
        `  const usage = await connectMockServer(server.url).usage();`,
        `  await server.close();`,
        `  console.log(JSON.stringify({ resolved: require.resolve('${NAME}'), requests: usage.requests }));`,
        `})();`,
      ].join('\n'),
    );
    const check = await runCommand(process.execPath, ['--no-warnings=ExperimentalWarning', 'check.cjs'], {
      cwd: dir,
      timeoutMs: 60_000,
    });
    expect(check.stderr).toBe('');
    expect(check.code).toBe(0);
    expect(JSON.parse(check.stdout)).toEqual({
      resolved: join(app, 'node_modules', NAME, 'dist', 'index.js'),
      requests: 0,
    });
  });

  test('a store without the Redis client installed: one line that says how to install it', async () => {
    const serve = await runCommand('npx', ['mockapi-cli', 'serve', '--port', '0', '--store', 'redis://127.0.0.1:9/0'], {
      cwd: dir,
      timeoutMs: 60_000,
    });
    expect(stderrBesidesNpmConfig(serve.stderr).join('\n')).toContain('npm install @redis/client');
    expect(serve.code).toBe(1);
  });
});

describe("a vitest test file in the user's project", () => {
  const KEY = 'mk_vitestHelperInApp000000000000001';
  const YAML = `project: vitest-user\napiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /users/:id\n    response: { body: { id: "\${params.id}" } }\n`;
  let dir = '';
  const vitestLink = (): string => join(app, 'node_modules', 'vitest');

  beforeAll(async () => {
    dir = join(app, 'vitest-user');
    await mkdir(dir, { recursive: true });
    // The user's own vitest (an optional peer dependency of the package), as \`npm install -D vitest\`
    // would put it: here the checkout's, linked, so the test needs no download.
    await symlink(join(ROOT, 'node_modules', 'vitest'), vitestLink(), 'dir');
  });

  afterAll(async () => {
    if (app !== '') await rm(vitestLink(), { force: true });
  });

  test("useMockServer from 'mockapi-cli/vitest' runs, resets a rotated key between tests, and never writes the committed mockapi.yaml", async () => {
    await writeFile(join(dir, 'mockapi.yaml'), YAML);
    await writeFile(
      join(dir, 'users.test.ts'),
      [
        `import { expect, test } from 'vitest';`,
        `import { useMockServer } from '${NAME}/vitest';`,
        `const mock = useMockServer({ config: './mockapi.yaml' });`,
        `const get = (key: string) => fetch(\`\${mock.url}/mock/users/7\`, { headers: { 'x-api-key': key } });`,
        `test('a rotation refuses the old key at once', async () => {`,
        `  const res = await fetch(\`\${mock.url}/__mockapi/rotate-key\`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });`,
        `  expect(res.status).toBe(200);`,
        `  const { key } = (await res.json()) as { key: string };`,
        `  expect((await get('${KEY}')).status).toBe(401);`,
        `  expect((await get(key)).status).toBe(200);`,
        `});`,
        `test('the next test has the committed key back, and a stub answers first', async () => {`,
        `  expect((await get('${KEY}')).status).toBe(200);`,
        `  await mock.stub({ method: 'GET', path: '/users/:id', response: { status: 503 } }, { times: 1 });`,
        `  expect((await get('${KEY}')).status).toBe(503);`,
        `  expect(await (await get('${KEY}')).json()).toEqual({ id: '7' });`,
        `});`,
      ].join('\n'),
    );
    const run = await runCommand(
      process.execPath,
      [join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--root', dir],
      { cwd: dir, timeoutMs: 120_000 },
    );
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/Tests\s+2 passed \(2\)/);
    expect(await readFile(join(dir, 'mockapi.yaml'), 'utf8')).toBe(YAML);
  });
});

describe('npm start in the checkout', () => {
  test('hands SIGTERM on to the server: sent to npm alone, the server stops too', async () => {
    // Without `exec`, npm's `sh -c` would be the one to die and the server would run on, orphaned.
    const start = startCommand('npm', ['start', '--', '--port', '0', '--no-state', '--no-watch', '--log', 'off'], {
      cwd: sources,
    });
    const [, url] = await start.waitForStdout(/^mockapi listening on (http:\/\/127\.0\.0\.1:\d+) /m, 60_000);
    start.child.kill('SIGTERM'); // npm only, not its group
    const stopped = await Promise.race([
      start.closed.then(() => true),
      new Promise<boolean>((done) => setTimeout(() => done(false), 15_000)),
    ]);
    if (!stopped) {
      // Clean up the orphan through its registry entry before failing.
      const dir = join(sources, '.mockapi', 'servers');
      for (const name of existsSync(dir) ? await readdir(dir) : []) {
        const entry = JSON.parse(await readFile(join(dir, name), 'utf8')) as { pid: number; url: string };
        if (entry.url === url) process.kill(entry.pid, 'SIGKILL');
      }
    }
    expect(stopped).toBe(true);
    await expect(request(`${url}/__mockapi/health`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe("tests in parallel against one server, a session each, in the user's project", () => {
  // The examples the testing page shows, from the installed package: vitest (a global setup and
  // useMockServer({ session: true })), node:test (run() after one server) and Playwright (the mock fixture).
  test('vitest: two files at once, each test in its own session', async () => {
    await linkFromCheckout(app, 'vitest');
    const run = await runVitest(await copyExample(app, 'sessions-vitest'));
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/Test Files\s+2 passed \(2\)/);
    expect(run.stdout).toMatch(/Tests\s+3 passed \(3\)/);
  }, 160_000);

  test('node:test: two files at once, each test in its own session', async () => {
    const run = await runNodeTests(await copyExample(app, 'sessions-node-test'));
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/ℹ pass 3\n/);
    expect(run.stdout).toMatch(/ℹ fail 0\n/);
  }, 160_000);

  test("Playwright: the mock fixture per test, the session's baggage on the page's requests (Debian's chromium)", async () => {
    for (const name of ['@playwright/test', 'playwright', 'playwright-core']) await linkFromCheckout(app, name);
    const run = await runPlaywright(await copyExample(app, 'sessions-playwright'));
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/2 passed/);
  }, 200_000);
});
