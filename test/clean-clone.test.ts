// A newcomer's first step (the brief: `npm ci && npm start`, `npm ci && npm test`): `npm ci` in a
// fresh clone builds the package through `prepare`, so the `mockapi` bin works straight away.
// A real clone, not a copy of this checkout: it holds what is committed and nothing that only
// exists here (no dist/, no node_modules, no ignored or untracked file the build might lean on).
// Run it on committed work — uncommitted edits are not in the clone.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './helpers/cli.js';
import { runCommand, warningsBesidesNpmConfig, type CommandResult } from './helpers/pack.js';

/** npm ci installs every dependency (from npm's cache when it can) and then builds: a busy machine needs minutes. */
const CI_TIMEOUT = 300_000;

let tmp = '';
let clone = '';
let ci: CommandResult;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'mockapi-clone-'));
  clone = join(tmp, 'mockapi');
  const cloned = await runCommand('git', ['clone', '--quiet', ROOT, clone], { cwd: tmp, timeoutMs: 60_000 });
  expect(cloned.code, cloned.stderr).toBe(0);
  ci = await runCommand('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: clone, timeoutMs: CI_TIMEOUT });
}, CI_TIMEOUT + 60_000);

afterAll(async () => {
  if (tmp !== '') await rm(tmp, { recursive: true, force: true });
});

test('npm ci in a fresh clone succeeds, builds, and warns about nothing of ours', () => {
  expect(ci.code, ci.stderr).toBe(0);
  expect(existsSync(join(clone, 'dist', 'cli', 'cli.bundle.cjs'))).toBe(true);
  // Dependencies' install scripts may be listed (esbuild's postinstall); our own prepare must not be.
  expect(warningsBesidesNpmConfig(ci.stderr).filter((line) => /mockapi/i.test(line))).toEqual([]);
});

// Each command may take up to its own 60 s on a busy machine (npx resolves the bin through npm).
test('node bin/mockapi.js --version and npx mockapi --version work right after npm ci', { timeout: 150_000 }, async () => {
  const { version } = JSON.parse(await readFile(join(clone, 'package.json'), 'utf8')) as { version: string };
  const bin = await runCommand(process.execPath, ['bin/mockapi.js', '--version'], { cwd: clone, timeoutMs: 60_000 });
  expect(bin.stderr).toBe('');
  expect(bin.stdout).toBe(`${version}\n`);
  expect(bin.code).toBe(0);
  // npx in the project runs the project's own bin (`--no`: never download a package named mockapi; `--`: `--version` is mockapi's, not npx's).
  const npx = await runCommand('npx', ['--no', '--', 'mockapi', '--version'], { cwd: clone, timeoutMs: 60_000 });
  expect(npx.stdout).toBe(`${version}\n`);
  expect(npx.code).toBe(0);
});
