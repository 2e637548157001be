// One packed checkout per test run, shared by the test files that need the package as a user gets
// it (pack.test.ts, docs-commands.test.ts): a copy of the working tree as a fresh clone of it would
// hold it, where the README's own `npm ci` and `npm run pack` ran, word for word.
//
// The first file to ask builds it; the others wait for it. Files run in separate processes, so the
// build is claimed by creating its folder (exclusive), and its outcome is a JSON file the waiters
// read. The folder is named after this run (test/global-setup.ts provides the id) and removed
// when the run ends.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync } from 'node:fs';
import { copyFile, mkdir, readFile, readlink, rename, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { inject } from 'vitest';
import { ROOT } from './cli.js';
import { runCommand, type CommandResult } from './pack.js';

export interface PackedCheckout {
  /** This run's folder: the checkout and whatever the files put beside it. */
  root: string;
  /** The copy of the working tree, after `npm ci` and `npm run pack`. */
  checkout: string;
  /** `npm ci` in the checkout. */
  ci: CommandResult;
  /** `npm run pack` in the checkout: npm's banner, then the tarball's path. */
  pack: CommandResult;
  /** The tarball `npm run pack` printed (empty when it failed). */
  tarball: string;
  /** As a release packs (`npm publish "$(npm run -s pack)"`), into a folder: `npm run -s pack -- <releaseDir>` in the checkout. */
  release: CommandResult;
  releaseDir: string;
  /**
   * `npx --no -- mockapi --version` in the checkout, offline, after the packs. The first npx of
   * the checkout's own bin installs the checkout into npm's npx cache (~/.npm/_npx/<hash of its
   * path>), running its `prepare` (a build): first runs side by side (the checkout's doc blocks)
   * write that folder over each other (npm/cli#8224), and one stopped midway leaves it without its
   * package.json (ENOENT for every later npx of the run). Here it runs alone, and its build is done
   * before any file uses the checkout.
   */
  npx: CommandResult;
}

/** npm ci installs every dependency (from npm's cache when it can) and builds; npm run pack builds again and packs. */
const BUILD_TIMEOUT = 420_000;

declare module 'vitest' {
  export interface ProvidedContext {
    /** An id of this test run (test/global-setup.ts), for folders the test files share. */
    runId: string;
  }
}

/** The run's shared folder (see test/global-setup.ts, which removes it at the end). */
export function runFolder(): string {
  let id: string | undefined;
  try {
    id = inject('runId');
  } catch {
    id = undefined;
  }
  return join(tmpdir(), `mockapi-run-${id ?? `pid${process.pid}`}`);
}

/**
 * The files of the working tree a clone of it would hold once committed: tracked and untracked
 * ones, none that git ignores (no dist/, node_modules/, .mockapi/), none deleted.
 */
async function copyWorkingTree(to: string): Promise<void> {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  for (const file of new Set(listed.stdout.split('\0').filter((f) => f !== ''))) {
    const from = join(ROOT, file);
    if (!existsSync(from) && !isLink(from)) continue; // deleted in the working tree
    await mkdir(dirname(join(to, file)), { recursive: true });
    if (isLink(from)) await symlink(await readlink(from), join(to, file));
    else await copyFile(from, join(to, file));
  }
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** npm as a user's shell runs it, with this machine's npm cache preferred and no audit or fund notes. */
export const NPM_QUIET = {
  npm_config_prefer_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};

async function build(root: string): Promise<Omit<PackedCheckout, 'root'>> {
  const checkout = join(root, 'mockapi');
  await copyWorkingTree(checkout);
  // A checkout where someone served an example over HTTPS: its CA and the CA's private key sit
  // under examples/ (a shipped folder). Neither may reach the package (pack.test.ts checks).
  const tls = await runCommand(
    process.execPath,
    [
      join(ROOT, 'bin', 'mockapi.js'),
      'tls',
      'env',
      '-c',
      join(checkout, 'examples', 'look-alike', 'payments', 'mockapi.yaml'),
    ],
    { cwd: checkout, timeoutMs: 60_000 },
  );
  if (tls.code !== 0) throw new Error(`mockapi tls env failed: ${tls.stderr}`);
  const ci = await runCommand('npm', ['ci'], { cwd: checkout, timeoutMs: BUILD_TIMEOUT, env: NPM_QUIET });
  const pack =
    ci.code === 0
      ? await runCommand('npm', ['run', 'pack'], { cwd: checkout, timeoutMs: BUILD_TIMEOUT, env: NPM_QUIET })
      : { code: null, stdout: '', stderr: 'npm ci failed' };
  const last = pack.stdout.trimEnd().split('\n').pop() ?? '';
  // Here, not in a test file: the pack builds again, and other files run the checkout's build meanwhile.
  const releaseDir = join(root, 'release');
  const release =
    pack.code === 0
      ? await runCommand('npm', ['run', '-s', 'pack', '--', releaseDir], {
          cwd: checkout,
          timeoutMs: BUILD_TIMEOUT,
          env: NPM_QUIET,
        })
      : { code: null, stdout: '', stderr: 'npm run pack failed' };
  const npx =
    release.code === 0
      ? await runCommand('npx', ['--no', '--', 'mockapi', '--version'], {
          cwd: checkout,
          timeoutMs: BUILD_TIMEOUT,
          env: { ...NPM_QUIET, npm_config_offline: 'true' },
        })
      : { code: null, stdout: '', stderr: 'the release pack failed' };
  return {
    checkout,
    ci,
    pack,
    tarball: pack.code === 0 && last.endsWith('.tgz') ? last : '',
    release,
    releaseDir,
    npx,
  };
}

let mine: Promise<PackedCheckout> | undefined;

/** The run's packed checkout: built by the first file that asks, awaited by the others. */
export function packedCheckout(): Promise<PackedCheckout> {
  mine ??= claimOrWait(runFolder());
  return mine;
}

async function claimOrWait(root: string): Promise<PackedCheckout> {
  await mkdir(dirname(root), { recursive: true });
  const outcome = join(root, 'packed.json');
  let claimed = true;
  await mkdir(root).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
    claimed = false;
  });
  if (claimed) {
    let result: Omit<PackedCheckout, 'root'> | { error: string };
    try {
      result = await build(root);
    } catch (err) {
      result = { error: err instanceof Error ? (err.stack ?? err.message) : String(err) };
    }
    await writeFile(`${outcome}.tmp`, JSON.stringify(result));
    await rename(`${outcome}.tmp`, outcome); // whole, or not there
  }
  const deadline = Date.now() + BUILD_TIMEOUT * 2;
  while (!existsSync(outcome)) {
    if (Date.now() > deadline) throw new Error(`no packed checkout in ${root} after ${(BUILD_TIMEOUT * 2) / 1000} s`);
    await new Promise((r) => setTimeout(r, 250)); // another file's process is building it: poll for its outcome
  }
  const result = JSON.parse(await readFile(outcome, 'utf8')) as Omit<PackedCheckout, 'root'> | { error: string };
  if ('error' in result) throw new Error(`the packed checkout could not be made: ${result.error}`);
  return { root, ...result };
}
