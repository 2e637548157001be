// Whether dist/ was built from exactly the inputs there are now (scripts/build.mjs): the SHA-256 of
// every input file's path and bytes, and of this Node's version (the CLI's code cache is V8's), as
// the last complete build left them, kept in dist/.build-stamp.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The stamp's file, under the root. */
export const STAMP_FILE = join('dist', '.build-stamp');
/** Folders whose every file is an input. */
const INPUT_DIRS = ['src', 'schema'];
/** Single files that are inputs (mockapi.yaml: the bundle's code cache is made by serving it). */
const INPUT_FILES = [
  'scripts/build.mjs',
  'scripts/build-stamp.mjs',
  'scripts/build-schema.mjs',
  'scripts/build-inspector.mjs',
  'scripts/bundle.mjs',
  'tsconfig.json',
  'package.json',
  'package-lock.json',
  'mockapi.yaml',
];
/** What a complete build leaves: the programmatic API, the CLI bundle and loader, verify's thread, the inspector page. */
export const OUTPUTS = [
  'dist/index.js',
  'dist/cli/cli.bundle.cjs',
  'dist/cli/load-cli.js',
  'dist/cli/load-cli.cjs',
  'dist/verify/mock-thread.bundle.cjs',
  'dist/inspector/inspector.html',
];

/** Every file under `dir` of `root`, relative to `root`. */
function filesUnder(root, dir) {
  const out = [];
  const walk = (at) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) out.push(relative(root, path));
    }
  };
  if (existsSync(join(root, dir))) walk(join(root, dir));
  return out;
}

/** The stamp of the inputs under `root` as they are now. */
export function inputStamp(root, nodeVersion = process.version) {
  const hash = createHash('sha256').update(`node ${nodeVersion}\0`);
  const files = [
    ...INPUT_DIRS.flatMap((dir) => filesUnder(root, dir)),
    ...INPUT_FILES.filter((f) => existsSync(join(root, f))),
  ].sort();
  for (const file of files)
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(root, file)))
      .update('\0');
  return hash.digest('hex');
}

/** Whether every output exists and the stamp names the inputs as they are. */
export function isUpToDate(root) {
  const stamp = join(root, STAMP_FILE);
  if (!existsSync(stamp) || OUTPUTS.some((f) => !existsSync(join(root, f)))) return false;
  return readFileSync(stamp, 'utf8').trim() === inputStamp(root);
}

/** Before a build: dist/ no longer counts as current until the build completes. */
export function dropStamp(root) {
  rmSync(join(root, STAMP_FILE), { force: true });
}

/** After a complete build: the inputs as they are now (whole, by a rename). */
export function writeStamp(root) {
  const stamp = join(root, STAMP_FILE);
  writeFileSync(`${stamp}.tmp`, `${inputStamp(root)}\n`);
  renameSync(`${stamp}.tmp`, stamp);
}
