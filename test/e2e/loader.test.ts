// bin/mockapi.js runs the CommonJS bundle through dist/cli/load-cli.cjs, compiled from the V8 code cache
// the build made (scripts/bundle.mjs). These tests run copies of the built files with the cache
// missing, garbage or stale, and check that the bundle still evaluates only what a command needs.
import { beforeAll, describe, expect, test } from 'vitest';
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BIN, ROOT, runCli, startServe, useTempDir, writeConfig } from '../helpers/cli.js';

const PACKAGE_FILES = [
  'bin/mockapi.js',
  'bin/package.json',
  'dist/cli/load-cli.cjs',
  'dist/cli/cli.bundle.cjs',
  'dist/cli/cli.bundle.cache',
];
const VALID =
  'apiKey: mk_loaderTestKey00000000000000000\nendpoints:\n  - method: GET\n    path: /a\n    response: { body: a }\n';

const temp = useTempDir('mockapi-loader-');
let config: string;
beforeAll(async () => {
  config = await writeConfig(temp.path, VALID);
});

/** A copy of the built CLI in its own folder, with its own package.json version. */
async function copyPackage(name: string): Promise<string> {
  const pkg = join(temp.path, name);
  await mkdir(join(pkg, 'bin'), { recursive: true });
  await mkdir(join(pkg, 'dist', 'cli'), { recursive: true });
  for (const file of PACKAGE_FILES) await copyFile(join(ROOT, file), join(pkg, file));
  const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  await writeFile(join(pkg, 'package.json'), JSON.stringify({ ...manifest, version: `9.9.9-${name}` }));
  return pkg;
}

/** Runs a node child without inherited NODE_OPTIONS (V8 flags there would make V8 reject the cache). */
function runNode(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...env };
    delete childEnv.NODE_OPTIONS;
    delete childEnv.DEBUG;
    const child = spawn(process.execPath, args, { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

const HELP_LINE = 'start the mock server and hot-reload the config on change';

describe('the code cache', () => {
  test("the build's cache fits this Node: the bundle compiles from it", async () => {
    const script = `import('${pathToFileURL(join(ROOT, 'dist', 'cli', 'load-cli.js')).href}').then((m) => process.stdout.write(String(m.compileCli().fromCache)))`;
    const res = await runNode(['-e', script]);
    expect(res).toMatchObject({ code: 0, stdout: 'true' });
  });

  test('the bundle is ASCII: the loader takes its bytes as Latin-1 text, and a non-ASCII text in the source is an escape', async () => {
    const bundle = await readFile(join(ROOT, 'dist', 'cli', 'cli.bundle.cjs'));
    expect(bundle.findIndex((byte) => byte > 0x7f)).toBe(-1);
    // The source's non-ASCII text (the "…" of a stop's log line, dashes, arrows) is in it as \\u escapes.
    expect(bundle.toString('latin1')).toBe(bundle.toString('utf8'));
    const server = await startServe(['-c', config, '--no-state', '--log', 'off']);
    expect(await server.stop()).toBe(0);
    expect(server.stderr()).toContain('SIGTERM received, finishing in-flight requests\u2026');
  });

  test('a same-length edit of the bundle runs the edited code, not the cached code', async () => {
    const pkg = await copyPackage('stale');
    const bundle = join(pkg, 'dist', 'cli', 'cli.bundle.cjs');
    const source = await readFile(bundle, 'utf8');
    expect(source).toContain(HELP_LINE);
    // V8 checks only the length of the source: this cache would be accepted, with the old text in it.
    await writeFile(bundle, source.replace(HELP_LINE, HELP_LINE.toUpperCase()));
    const res = await runNode([join(pkg, 'bin', 'mockapi.js'), '--help']);
    const help = res.stdout.replace(/\s+/g, ' '); // commander wraps long lines
    expect(res.code).toBe(0);
    expect(help).toContain(HELP_LINE.toUpperCase());
    expect(help).not.toContain(HELP_LINE);
  });

  test.each([
    ['missing', null],
    ['empty', Buffer.alloc(0)],
    ['garbage', Buffer.alloc(5000, 0x5a)],
  ])('a %s cache: the CLI works the same', async (name, cache) => {
    const pkg = await copyPackage(name);
    const file = join(pkg, 'dist', 'cli', 'cli.bundle.cache');
    if (cache === null) await rm(file);
    else await writeFile(file, cache);
    const bin = join(pkg, 'bin', 'mockapi.js');
    expect(await runNode([bin, '--version'])).toEqual({ code: 0, stdout: `9.9.9-${name}\n`, stderr: '' });
    expect(await runNode([bin, 'validate', '-c', config])).toEqual({
      code: 0,
      stdout: `${config} is valid (1 endpoint)\n`,
      stderr: '',
    });
    expect((await runNode([bin, 'frobnicate'])).code).toBe(2);
  });

  test('a cache with the right key but data V8 cannot use is rejected by V8, silently', async () => {
    const pkg = await copyPackage('rejected');
    const file = join(pkg, 'dist', 'cli', 'cli.bundle.cache');
    const cache = await readFile(file);
    await writeFile(file, Buffer.concat([cache.subarray(0, 20), Buffer.alloc(cache.length - 20, 0x5a)]));
    expect(await runNode([join(pkg, 'bin', 'mockapi.js'), '--version'])).toEqual({
      code: 0,
      stdout: '9.9.9-rejected\n',
      stderr: '',
    });
  });

  test('--version reads the package.json beside the bundle (import.meta.url in the CommonJS bundle)', async () => {
    const pkg = await copyPackage('meta');
    expect((await runNode([join(pkg, 'bin', 'mockapi.js'), '--version'])).stdout).toBe('9.9.9-meta\n');
  });

  test('under --enable-source-maps the bundle is required instead, and works the same', async () => {
    expect(await runNode(['--enable-source-maps', BIN, 'validate', '-c', config])).toEqual({
      code: 0,
      stdout: `${config} is valid (1 endpoint)\n`,
      stderr: '',
    });
  });
});

/** Call counts of the bundle's module bodies (esbuild names each after its file) in a V8 coverage folder. */
async function moduleCalls(coverageDir: string): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const name of await readdir(coverageDir)) {
    const { result } = JSON.parse(await readFile(join(coverageDir, name), 'utf8')) as {
      result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[];
    };
    for (const script of result.filter((s) => s.url.endsWith('cli.bundle.cjs'))) {
      for (const fn of script.functions) {
        if (/^(src|node_modules)\//.test(fn.functionName))
          calls.set(fn.functionName, Math.max(calls.get(fn.functionName) ?? 0, fn.ranges[0]?.count ?? 0));
      }
    }
  }
  return calls;
}

describe('a command evaluates only the modules it uses', () => {
  test('validate of a valid config: not the server, not yaml', async () => {
    const coverage = await mkdtemp(join(temp.path, 'coverage-'));
    expect((await runCli(['validate', '-c', config], { env: { NODE_V8_COVERAGE: coverage } })).code).toBe(0);
    const calls = await moduleCalls(coverage);
    expect(calls.get('src/cli/commands/validate.ts')).toBe(1);
    expect(calls.get('src/http/handler.ts')).toBe(0);
    expect(calls.get('src/mock-server.ts')).toBe(0);
    expect(calls.get('node_modules/yaml/dist/index.js')).toBe(0);
  });

  test('validate of a config with problems evaluates yaml (for positions)', async () => {
    const coverage = await mkdtemp(join(temp.path, 'coverage-'));
    const bad = await writeConfig(temp.path, 'apiKey: short\nendpoints: []\nextra: 1\n', 'bad.yaml');
    expect((await runCli(['validate', '-c', bad], { env: { NODE_V8_COVERAGE: coverage } })).code).toBe(1);
    expect((await moduleCalls(coverage)).get('node_modules/yaml/dist/index.js')).toBe(1);
  });

  test('serve of a valid config: the server, not yaml', async () => {
    const coverage = await mkdtemp(join(temp.path, 'coverage-'));
    const server = await startServe(['-c', config, '--no-state', '--log', 'off'], {
      env: { NODE_V8_COVERAGE: coverage },
    });
    expect((await fetch(`${server.url}/__mockapi/health`)).status).toBe(200);
    expect(await server.stop()).toBe(0);
    const calls = await moduleCalls(coverage);
    expect(calls.get('src/http/handler.ts')).toBe(1);
    expect(calls.get('node_modules/yaml/dist/index.js')).toBe(0);
    expect(calls.get('src/config/read-positioned.ts')).toBe(0);
    expect(calls.get('src/openapi/import.ts')).toBe(0);
  });

  test("import's parser and sampler are outside the bundle, required only by import", async () => {
    const bundle = await readFile(join(ROOT, 'dist', 'cli', 'cli.bundle.cjs'), 'utf8');
    expect(bundle).not.toContain('node_modules/@readme/openapi-parser');
    expect(bundle).not.toContain('node_modules/openapi-sampler');
    // serve and validate above never evaluate src/openapi/import.ts, the only module that requires them
    const coverage = await mkdtemp(join(temp.path, 'coverage-'));
    expect((await runCli(['validate', '-c', config], { env: { NODE_V8_COVERAGE: coverage } })).code).toBe(0);
    const calls = await moduleCalls(coverage);
    expect(calls.get('src/openapi/import.ts')).toBe(0);
    expect(calls.get('src/description/read-description.ts')).toBe(0);
  });

  test("serve over plain HTTP does not load Node's tls, https or zlib (~5 ms of every start); over HTTPS it loads tls and https", async () => {
    // A preload (NODE_OPTIONS --require: not a V8 flag, so the code cache still fits) writes the
    // Node modules the process loaded when it exits.
    const report = join(temp.path, 'builtins-report.cjs');
    await writeFile(
      report,
      `process.on('exit', () => require('node:fs').writeFileSync(process.env.BUILTINS_OUT, process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)).join('\\n')));\n`,
    );
    const builtins = async (args: string[]): Promise<string[]> => {
      const out = join(await mkdtemp(join(temp.path, 'builtins-')), 'list.txt');
      const server = await startServe(['-c', config, '--no-state', '--log', 'off', ...args], {
        env: { NODE_OPTIONS: `--require ${report}`, BUILTINS_OUT: out },
      });
      expect((await fetch(`${server.url}/__mockapi/health`)).status).toBe(200);
      expect(await server.stop()).toBe(0);
      return (await readFile(out, 'utf8')).split('\n');
    };
    const plain = await builtins([]);
    expect(plain).toContain('http');
    expect(plain.filter((m) => ['tls', 'https', 'zlib'].includes(m))).toEqual([]);
    const secure = await builtins(['--https', '0']);
    expect(secure).toEqual(expect.arrayContaining(['tls', 'https']));
  });

  test('@peculiar/x509 is outside the bundle, loaded only when HTTPS needs a certificate made', async () => {
    const bundle = await readFile(join(ROOT, 'dist', 'cli', 'cli.bundle.cjs'), 'utf8');
    expect(bundle).not.toContain('node_modules/@peculiar/');
    const loadsX509 = async (args: string[]): Promise<boolean> => {
      const coverage = await mkdtemp(join(temp.path, 'coverage-'));
      const server = await startServe(['-c', config, '--no-state', '--log', 'off', ...args], {
        env: { NODE_V8_COVERAGE: coverage },
      });
      expect((await fetch(`${server.url}/__mockapi/health`)).status).toBe(200);
      expect(await server.stop()).toBe(0);
      let seen = false;
      for (const name of await readdir(coverage)) {
        const { result } = JSON.parse(await readFile(join(coverage, name), 'utf8')) as { result: { url: string }[] };
        if (result.some((s) => s.url.includes('node_modules/@peculiar/x509/'))) seen = true;
      }
      return seen;
    };
    expect(await loadsX509([])).toBe(false);
    expect(await loadsX509(['--https', '0'])).toBe(true);
  });
});
