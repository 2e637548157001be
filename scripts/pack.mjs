#!/usr/bin/env node
// Packs mockapi-cli for publishing from a stage folder, not from the checkout:
//
//   npm run pack [-- <destination folder>]        (node scripts/pack.mjs [<destination folder>])
//
// builds, copies what package.json "files" names (and a LICENSE, if there is one) into a temporary
// folder, writes there the repository's package.json without "scripts" and "devDependencies", runs
// `npm pack` in it and prints the tarball's absolute path — and only that — on stdout, so a release
// is `npm publish "$(npm run -s pack)"`. The destination defaults to the repository root, where a
// plain `npm pack` puts its tarball; a relative one is taken from where npm was started.
//
// Why a stage: the repository needs `"prepare": "npm run build"` so that `npm ci` in a clone leaves
// a working bin. Shipped in the tarball, that script would be an install script of the package:
// npm 11 warns about it on every install of mockapi-cli ("1 package has install scripts not yet
// covered by allowScripts: mockapi-cli@… (prepare: npm run build)"), and it could not run there
// anyway, as the tarball has no src/. Every other script needs the checkout too (sources, tests,
// devDependencies), so the published package.json carries none.
//
//   node scripts/pack.mjs --refuse-pack
//
// is the repository's `prepack`: a plain `npm pack` in the checkout stops with a pointer to
// `npm run pack`, so no tarball with install-time scripts is ever made. npm runs a script's
// `pre<name>` first, so `npm run pack` runs this `prepack` too: there (npm says `npm_command=run`,
// or `run-script` before npm 9) it lets the run go on and prints nothing.
//
//   node scripts/pack.mjs --refuse-publish
//
// is the repository's `prepublishOnly`: a bare `npm publish` in the checkout would ship the
// prepare script, so it stops with a one-line pointer to the staged way. (`npm publish <tarball>`
// runs no script of the checkout, so the staged release passes.)
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

if (process.argv[2] === '--refuse-publish') {
  console.error(
    'mockapi-cli is published from a staged package without build scripts: npm publish "$(npm run -s pack)" (CONTRIBUTING.md, "Build and release")',
  );
  process.exit(1);
}
if (process.argv[2] === '--refuse-pack') {
  // The repository's `prepack`: a plain `npm pack` in the checkout would put `prepare` (an install
  // script) and every other script into the tarball. The stage below has no scripts, so its own
  // `npm pack` never gets here. `npm run pack` runs this hook before the staged pack: let it through.
  if (process.env.npm_command === 'run' || process.env.npm_command === 'run-script') process.exit(0);
  console.error(
    "mockapi-cli is packed from a staged package without build scripts: run `npm run pack` (it prints the tarball's path), not `npm pack`",
  );
  process.exit(1);
}

/** Runs npm; its stdout is returned when `capture`, otherwise sent to stderr, as is its stderr. */
function npm(args, cwd, capture = false) {
  // npm is npm.cmd on Windows, which only a shell can start.
  const run = spawnSync('npm', args, {
    cwd,
    stdio: ['ignore', capture ? 'pipe' : 2, 2],
    encoding: 'utf8',
    shell: process.platform === 'win32',
  });
  if (run.status !== 0) {
    console.error(
      `pack: npm ${args.join(' ')} failed${run.error ? `: ${run.error.message}` : ` (exit ${run.status ?? run.signal})`}`,
    );
    process.exit(1);
  }
  return run.stdout;
}

/**
 * In this repository an example's `# yaml-language-server: $schema=` line points at
 * `../../schema/…`, so editors check it here. Copied out of the installed package into a project
 * (`cp node_modules/mockapi-cli/examples/flaky/mockapi.yaml .`), that path leads nowhere: the
 * shipped examples point at the installed schema instead, as `mockapi init` writes it.
 */
function pointExamplesAtInstalledSchema(dir) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !/\.ya?ml$/.test(entry.name)) continue;
    const file = join(entry.parentPath, entry.name);
    const text = readFileSync(file, 'utf8');
    const pointed = text.replace(
      /^(# yaml-language-server: \$schema=)(?:\.\.\/)+schema\/mockapi\.schema\.json$/m,
      `$1./node_modules/${manifest.name}/schema/mockapi.schema.json`,
    );
    if (pointed !== text) writeFileSync(file, pointed);
  }
}

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const destination = resolve(process.env.INIT_CWD ?? process.cwd(), process.argv[2] ?? ROOT);

// Always from the sources: dist/ might be older than the last edit or checkout (the build does
// nothing when dist/ was built from exactly the sources there are: scripts/build.mjs).
npm(['run', 'build'], ROOT);

// npm adds a LICENSE to every package whatever "files" says; "files" holds only plain paths.
const licenses = readdirSync(ROOT).filter((name) => /^licen[cs]e(\.|$)/i.test(name));
const shipped = [...new Set([...manifest.files, ...licenses])];
const missing = shipped.filter((entry) => !existsSync(join(ROOT, entry)));
if (missing.length > 0) {
  console.error(`pack: package.json "files" names what does not exist: ${missing.join(', ')}`);
  process.exit(1);
}

const stage = mkdtempSync(join(tmpdir(), 'mockapi-cli-stage-'));
try {
  // (the build's stamp of its inputs is the checkout's, not the package's)
  const notStamp = (from) => from !== join(ROOT, 'dist', '.build-stamp');
  for (const entry of shipped) cpSync(join(ROOT, entry), join(stage, entry), { recursive: true, filter: notStamp });
  pointExamplesAtInstalledSchema(join(stage, 'examples'));
  delete manifest.scripts;
  delete manifest.devDependencies;
  // Two spaces and a final newline, as the repository's own, so the other fields stay byte for byte.
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);

  mkdirSync(destination, { recursive: true });
  const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', destination], stage, true));
  console.log(join(destination, packed.filename));
} finally {
  rmSync(stage, { recursive: true, force: true });
}
