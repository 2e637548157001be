#!/usr/bin/env node
// `npm run build`: the config schema's validator (scripts/build-schema.mjs), tsc, the inspector page
// (scripts/build-inspector.mjs) and the CLI bundle with its code cache (scripts/bundle.mjs), in that
// order — or nothing, when dist/ was built from exactly the inputs there are now.
//
//   node scripts/build.mjs            build, unless dist/ is up to date
//   node scripts/build.mjs --force    build in any case
//
// Why: one checkout builds several times in a row with nothing changed in between — `npm ci` (its
// `prepare`), then `npm test`, `npm run bench`, `npm run pack` (twice for a release) and npm's own
// install of the checkout for `npx` — and a full build takes 15–30 s of CPU on two cores.
//
// Up to date (scripts/build-stamp.mjs): dist/.build-stamp holds the SHA-256 of every input (src/,
// schema/, the build scripts, tsconfig.json, package.json, package-lock.json, mockapi.yaml, and this
// Node's version) as the last complete build left them, and every output it names exists. The stamp
// is removed before a build starts and written only after every step succeeded, so an interrupted
// or failed build never leaves dist/ looking current. An output edited by hand is not noticed:
// build with --force.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dropStamp, isUpToDate, writeStamp } from './build-stamp.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The steps of a build, each a node script run in the repository root. */
const STEPS = [
  ['scripts/build-schema.mjs'],
  [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
  ['scripts/build-inspector.mjs'],
  ['scripts/bundle.mjs'],
];

if (!process.argv.includes('--force') && isUpToDate(root)) {
  console.error('build: dist/ is up to date (no input changed since the last build; --force builds anyway)');
  process.exit(0);
}
dropStamp(root);
for (const args of STEPS) {
  const run = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
// Taken after the steps: the schema step rewrites a file under src/ (the same bytes when the schema did not change).
writeStamp(root);
