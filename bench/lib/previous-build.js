// The previous build, beside this one (bench/run.js): a commit of this repository — `--previous
// <ref>`, by default the newest `v*` tag when there is one, else HEAD's first parent (on main: the
// state before the last merge) — unpacked with `git archive` into a folder of the system's temp
// directory named by its commit, with this checkout's node_modules linked in, and built there with
// its own `npm run build`. Kept between runs: a second run against the same commit builds nothing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, progress } from './options.js';

function git(args) {
  const run = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  return run.status === 0 ? run.stdout.trim() : undefined;
}

/** The commit `--previous` names (or the default one), with how it was chosen; undefined outside a git checkout. */
export function previousCommit(ref) {
  const chosen = ref ?? git(['describe', '--tags', '--abbrev=0', '--match', 'v*']) ?? 'HEAD^';
  const sha = git(['rev-parse', '--verify', '--quiet', `${chosen}^{commit}`]);
  return sha === undefined ? undefined : { ref: chosen, sha, subject: git(['log', '-1', '--format=%s', sha]) ?? '' };
}

/**
 * The CLI of the build of `commit` (see previousCommit), built on first use: `{ cli, label }`, or
 * `{ error }` in words when it cannot be unpacked or built (the figures are then taken without it).
 */
export async function previousBuild(commit) {
  const dir = join(tmpdir(), `mockapi-bench-build-${commit.sha.slice(0, 12)}`);
  const cli = join(dir, 'bin', 'mockapi.js');
  const label = `${commit.ref} (${commit.sha.slice(0, 7)}${commit.subject === '' ? '' : `: ${commit.subject.slice(0, 60)}`})`;
  if (existsSync(join(dir, 'dist', 'cli', 'cli.js'))) return { cli, label };
  progress(`building the previous build, ${label}, in ${dir}…`);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const unpack = spawnSync('sh', ['-c', `git archive --format=tar "$1" | tar -x -C "$2"`, 'sh', commit.sha, dir], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (unpack.status !== 0) return { error: `git archive ${commit.sha.slice(0, 7)} failed: ${unpack.stderr.trim()}` };
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const build = spawnSync('npm', ['run', 'build', '--silent'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  if (build.status !== 0 || !existsSync(join(dir, 'dist', 'cli', 'cli.js'))) {
    const why = `${build.stdout}\n${build.stderr}`.trim().split('\n').slice(-5).join('\n');
    await rm(join(dir, 'dist'), { recursive: true, force: true });
    return { error: `its build failed (with this checkout's node_modules): ${why}` };
  }
  return { cli, label };
}
