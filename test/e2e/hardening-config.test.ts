// Issue 6, config side, black-box through the built CLI: hostile or broken config files are refused
// by `mockapi validate` and `mockapi serve` with one clear line and exit 1, never a stack trace, and a
// running server that sees its file turn into one of them keeps serving the last good config.
// (test/e2e/config-load.test.ts checks the same loader in-process; this checks what a user sees.)
import { describe, expect, test } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { runCli, startServe, writeConfig, useTempDir } from '../helpers/cli.js';

const KEY = 'mk_configKey0123456789abcdefghijklm';
const VALID = `apiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /ping\n    response:\n      body: pong\n`;
const STACK_TRACE = /\n\s+at .+:\d+/;

/** 9 levels of 9 aliases: 9^9 values once expanded (the "billion laughs"). */
function billionLaughs(): string {
  let yaml = `apiKey: ${KEY}\na: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n`;
  let prev = 'a';
  for (const name of 'bcdefghi') {
    yaml += `${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]\n`;
    prev = name;
  }
  return yaml;
}

/** Few aliases, each of one large anchor: passes an alias-count limit, not a size limit. */
function largeAnchorBomb(): string {
  return `apiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /a\n    response:\n      body:\n        s: &s '${'"'.repeat(4_000_000)}'\n        copies: [${Array(99).fill('*s').join(',')}]\n`;
}

const temp = useTempDir('mockapi-hardening-config-');

interface FileCase {
  name: string;
  /** Creates the file (or whatever is at the path) and returns its path. */
  make(path: string): Promise<void>;
  /** stderr, with `<file>` for the path given on the command line. */
  expected: string;
}

const CASES: FileCase[] = [
  {
    name: 'a file over 5 MiB',
    make: (path) => writeFile(path, `apiKey: ${KEY}\n# ${'x'.repeat(6 * 1024 * 1024)}\n`),
    expected: `<file>: the config file is ${6 * 1024 * 1024 + KEY.length + 12} bytes, more than the 5242880-byte (5 MiB) limit`,
  },
  {
    name: 'an empty file',
    make: (path) => writeFile(path, ''),
    expected: '<file>:1:1: the config file is empty; it needs at least an apiKey (`mockapi init` writes a starter)',
  },
  {
    name: 'only comments',
    make: (path) => writeFile(path, '# nothing\n# here\n'),
    expected: '<file>:1:1: the config file is empty; it needs at least an apiKey (`mockapi init` writes a starter)',
  },
  { name: 'a folder', make: (path) => mkdir(path), expected: '<file>: this is a folder, not a config file' },
  {
    name: 'a FIFO (never read, so never hangs)',
    make: async (path) => void execFileSync('mkfifo', [path]),
    expected: '<file>: is not a regular file',
  },
  {
    name: 'a symbolic link to itself',
    make: (path) => symlink(path, path),
    expected: `<file>: cannot read the config file: ELOOP: too many symbolic links encountered, stat '<file>'`,
  },
  {
    name: 'bytes that are not UTF-8',
    make: (path) => writeFile(path, Buffer.from([0x61, 0x3a, 0x20, 0xff, 0xfe, 0x0a])),
    expected: '<file>: the config file is not UTF-8 text',
  },
  {
    name: 'a NUL byte',
    make: (path) => writeFile(path, `apiKey: ${KEY}\n\0\n`),
    expected: '<file>:2:1: invalid YAML: Implicit map keys need to be followed by map values',
  },
  {
    name: 'the billion laughs',
    make: (path) => writeFile(path, billionLaughs()),
    expected:
      "<file>:3:8: the config's YAML aliases expand to too much data (more than 100× reuse); refused as a possible alias bomb",
  },
  {
    name: '99 aliases of a 4 MB string',
    make: (path) => writeFile(path, largeAnchorBomb()),
    expected:
      "<file>:8:18: the config's YAML aliases expand to more than 50 MiB of data; refused as a possible alias bomb",
  },
  {
    name: '20,000 nested brackets',
    make: (path) => writeFile(path, `apiKey: ${KEY}\nx: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`),
    expected: '<file>:2:4: the config is nested too deeply to be read',
  },
];

describe('mockapi validate refuses broken and hostile files with one clear line', () => {
  test.concurrent.each(CASES)('$name', async ({ make, expected }) => {
    const path = join(temp.path, `${expected.length}-${Math.random().toString(36).slice(2)}.yaml`);
    await make(path);
    const result = await runCli(['validate', '-c', path]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toMatch(STACK_TRACE);
    expect(result.stderr.trim()).toBe(expected.replaceAll('<file>', path));
  });

  test('an unreadable file (not as root, who can read anything)', async (ctx) => {
    if (process.getuid?.() === 0) ctx.skip();
    const path = await writeConfig(temp.path, VALID, 'unreadable.yaml');
    await chmod(path, 0o000);
    const result = await runCli(['validate', '-c', path]);
    expect([result.code, result.stdout, result.stderr.trim()]).toEqual([
      1,
      '',
      `${path}: cannot read the config file: permission denied`,
    ]);
  });
});

describe('mockapi serve', () => {
  test('refuses an alias bomb at start: the issue, a summary, exit 1, no stack trace', async () => {
    const path = await writeConfig(temp.path, largeAnchorBomb(), 'bomb.yaml');
    const result = await runCli(['serve', '--port', '0', '-c', path, '--no-state']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toMatch(STACK_TRACE);
    expect(result.stderr.trim().split('\n')).toEqual([
      `${path}:8:18: the config's YAML aliases expand to more than 50 MiB of data; refused as a possible alias bomb`,
      `mockapi: 1 problem in ${path}; not starting`,
    ]);
  });

  test('keeps serving the last good config while its file becomes any of those, and picks up the next good one', async () => {
    const work = join(temp.path, 'live');
    await mkdir(work);
    const file = await writeConfig(work, VALID);
    const server = await startServe(['-c', file, '--no-state']); // pretty request logs, checked for keys below
    const revision = createHash('sha256').update(VALID).digest('hex');
    const status = async (key: string) => {
      const res = await request(`${server.mock}/ping`, { headers: { 'x-api-key': key } });
      await res.body.dump();
      return res.statusCode;
    };
    const served = async () =>
      ((await (await request(`${server.url}/__mockapi/health`)).body.json()) as { revision: string }).revision;
    const notReloaded = () =>
      server
        .stderr()
        .split('\n')
        .filter((l) => l.includes('config not reloaded, still serving the last good one')).length;

    const breakages: Array<[string, () => Promise<void>]> = [
      ['over 5 MiB', () => writeFile(file, `apiKey: mk_other\n# ${'x'.repeat(6 * 1024 * 1024)}\n`)],
      ['the billion laughs', () => writeFile(file, billionLaughs())],
      ['99 aliases of a 4 MB string', () => writeFile(file, largeAnchorBomb())],
      ['not UTF-8', () => writeFile(file, Buffer.from([0x61, 0x3a, 0x20, 0xff, 0x0a]))],
      ['empty', () => writeFile(file, '')],
      ['deleted', () => rm(file)],
    ];
    for (const [name, breakIt] of breakages) {
      const before = notReloaded();
      await breakIt();
      await server.waitForOutput(
        new RegExp(`(config not reloaded, still serving the last good one[^]*){${before + 1}}`),
        'stderr',
        15_000,
      );
      expect([name, await served(), await status(KEY)]).toEqual([name, revision, 200]);
    }
    // a folder where the file was: nothing to read, nothing changes
    await mkdir(file);
    expect([await served(), await status(KEY)]).toEqual([revision, 200]);
    await rm(file, { recursive: true });

    const next = VALID.replace(KEY, 'mk_nextKey0123456789abcdefghijklmno');
    await writeFile(file, next);
    const nextRevision = createHash('sha256').update(next).digest('hex');
    await server.waitForOutput(/mockapi reloaded/, 'stderr', 15_000);
    expect(await served()).toBe(nextRevision);
    expect(await status('mk_nextKey0123456789abcdefghijklmno')).toBe(200);
    expect(await status(KEY)).toBe(401);
    expect(server.stderr()).not.toMatch(STACK_TRACE);
    expect(server.stdout()).toMatch(/GET \/mock\/ping .*200/); // requests were logged…
    for (const key of [KEY, 'mk_nextKey0123456789abcdefghijklmno']) {
      expect(server.stdout() + server.stderr()).not.toContain(key); // …and no key, in reload messages either
    }
    expect(server.child.exitCode).toBeNull();
    expect(await readFile(file, 'utf8')).toBe(next);
  }, 60_000);
});
