#!/usr/bin/env node
// Bundles the CLI (src/cli/cli.ts and everything it imports, dependencies included) into one CommonJS
// file, dist/cli/cli.bundle.cjs, then makes V8's code cache for it, dist/cli/cli.bundle.cache.
// bin/mockapi.js runs the bundle through dist/cli/load-cli.cjs (src/cli/load-cli.ts, as CommonJS: an
// ES module entry would cost every start Node's ES module loader), which compiles it from that
// cache. Node then loads one file instead of ~100 modules, and V8 does not parse or compile most of
// what a start runs. Run by `npm run build` after tsc; tsc's dist/ output stays the
// programmatic API (package.json "exports"), which keeps its dependencies external.
//
//   node scripts/bundle.mjs
//
// What to keep in mind when changing this:
// - CommonJS, because Node 20 can give a code cache only to a vm.Script (22.1+ has
//   module.enableCompileCache for ES modules too).
// - No code splitting: the commands' `await import('./commands/serve.js')` become lazy
//   initialisers inside the one file, so a command still evaluates only the modules it uses
//   (`validate` never evaluates the server, `serve` on a valid config never evaluates yaml).
//   Splitting into chunks was measured no faster for `serve`: fewer bytes to compile, but more
//   files to load.
// - import.meta is empty in CommonJS: `import.meta.url` becomes the bundle's own file URL, so
//   src/cli/cli.ts's `../../package.json` still resolves to the package root (the bundle sits in
//   dist/cli/, as tsc's cli.js does).
// - The cache is made by a real start: a child process runs the bundle's `serve` on a copy of
//   mockapi.yaml until /__mockapi/health answers 200, then hands over script.createCachedData(),
//   which then holds every function that start compiled. It is valid only for this Node's V8 and
//   flags (V8 rejects it otherwise and the loader compiles as usual) and only for these bundle
//   bytes (the loader checks the key written in front of it). If making it fails, the build warns
//   and goes on without one: the CLI works the same, it only starts slower.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const BUNDLE_FILE = `${root}dist/cli/cli.bundle.cjs`;
const CACHE_FILE = `${root}dist/cli/cli.bundle.cache`;
const CHILD_FLAG = '--code-cache-child';
const TIMEOUT_MS = 30_000;

if (process.argv[2] === CHILD_FLAG) await serveForCache(process.argv[3]);
else await main();

async function main() {
  // A cache never outlives the bundle it was made for; and the ES module bundle that came before
  // this one must not be packed.
  for (const old of [
    CACHE_FILE,
    ...[
      'cli.bundle.js',
      'cli.bundle.js.map',
      'cli.bundle.cjs',
      'cli.bundle.cjs.map',
      'cli.bundle.cache',
      'load-cli.js',
    ].map((f) => `${root}dist/${f}`),
  ])
    rmSync(old, { force: true });
  const { build } = await import('esbuild');
  // What the bundles leave to require at run time (each loaded only by the feature that needs it; see
  // the first build's notes), and the banner that gives them `import.meta.url` and strict mode.
  const EXTERNAL = [
    '@readme/openapi-parser',
    'openapi-sampler',
    'ajv',
    'ajv/*',
    'ajv-formats',
    '@faker-js/faker',
    '@faker-js/faker/*',
    '@redis/client',
    '@peculiar/x509',
    'randexp',
    'undici',
    're2js',
  ];
  const BANNER = '"use strict";const __mockapiImportMetaUrl=require("node:url").pathToFileURL(__filename).href;';
  // What the three bundles share: one CommonJS file for Node 20.19, `import.meta.url` from the
  // banner. esbuild puts the banner above its own "use strict", which then no longer counts: say it
  // first. Strict, as the ES module bundle was.
  const nodeCjs = {
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20.19',
    define: { 'import.meta.url': '__mockapiImportMetaUrl' },
    banner: { js: BANNER },
    logLevel: 'warning',
  };
  await build({
    ...nodeCjs,
    entryPoints: ['src/cli/cli.ts'],
    outfile: BUNDLE_FILE,
    // ASCII only (esbuild's default, said here because the loader relies on it): non-ASCII text is
    // written as escapes, so src/cli/load-cli.ts can take the file's bytes as Latin-1 text, one copy.
    charset: 'ascii',
    // Dependencies only some commands or configs need stay outside the bundle, which every start reads
    // and compiles: `mockapi import`'s parser and sampler (they would double its size) and
    // @faker-js/faker (its locale is megabytes that only a config using `fake.` needs). They load
    // from node_modules when used. The bundle runs as a vm.Script compiled from its code cache, where a
    // real import() cannot run (V8 loses the callback Node needs, ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING),
    // so their `await import()` becomes a require() (Node ≥ 20.19 loads ES modules with require,
    // without a warning). The bundle's other dynamic imports are of bundled modules and become lazy
    // initialisers either way. The Redis client is an optional dependency, loaded only when a shared
    // store is configured (SPEC §12); bundled, it would also fail the build where it is not installed.
    // undici is loaded on a server's first upstream request (src/upstream/client.ts); re2js on the
    // first `matches` or OpenAPI `pattern` (src/regex/linear-regex.ts).
    // One list: a second `external` key in this object would silently replace the first.
    // @peculiar/x509 (with its ASN.1 schemas and reflect-metadata) makes HTTPS certificates: loaded with
    // require only when a server serves HTTPS with a generated certificate, or by `mockapi tls`.
    external: EXTERNAL,
    supported: { 'dynamic-import': false },
    // Whitespace only: a third fewer bytes to read and compile, 2–3 ms of cold start. Names stay as
    // written, so a stack trace (DEBUG=mockapi) still reads. minifySyntax and minifyIdentifiers were
    // measured no faster on top of it, and minifySyntax changes stack frame sizes (the column where
    // 20,000 nested brackets run out of stack moved).
    minifyWhitespace: true,
    // For `node --enable-source-maps`; mappings only, like tsc's maps (the sources are not shipped).
    sourcemap: 'linked',
    sourcesContent: false,
  });
  const nonAscii = readFileSync(BUNDLE_FILE).findIndex((byte) => byte > 0x7f);
  if (nonAscii !== -1)
    throw new Error(`${BUNDLE_FILE}: a byte over 0x7f at ${nonAscii}; the loader reads the bundle as ASCII`);
  // The loader bin/mockapi.js requires: src/cli/load-cli.ts as CommonJS (tsc's dist/cli/load-cli.js,
  // an ES module, stays for the build's own cache child and for programs that import it).
  await build({ ...nodeCjs, entryPoints: ['src/cli/load-cli.ts'], outfile: `${root}dist/cli/load-cli.cjs` });
  // verify's mock thread (src/verify/mock-thread.ts) in one file too: a thread that starts by
  // loading a few hundred modules one by one starts a second later on a busy machine.
  await build({
    ...nodeCjs,
    entryPoints: ['src/verify/mock-thread.ts'],
    outfile: `${root}dist/verify/mock-thread.bundle.cjs`,
    external: EXTERNAL,
    supported: { 'dynamic-import': false },
    minifyWhitespace: true,
  });
  try {
    const cache = await makeCodeCache();
    const temp = `${CACHE_FILE}.tmp-${process.pid}`;
    writeFileSync(temp, cache);
    renameSync(temp, CACHE_FILE);
  } catch (err) {
    process.stderr.write(
      `bundle: no code cache made (mockapi will start slower): ${err instanceof Error ? err.message : String(err)}\n`,
    );
  }
}

/** Starts `serve` in a child, waits for a health 200, and returns the code cache the child made. */
async function makeCodeCache() {
  const dir = mkdtempSync(join(tmpdir(), 'mockapi-code-cache-'));
  let child;
  try {
    const config = join(dir, 'mockapi.yaml');
    copyFileSync(`${root}mockapi.yaml`, config);
    // No NODE_OPTIONS and no exec flags: V8 rejects a cache made under other V8 flags.
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    child = spawn(process.execPath, [fileURLToPath(import.meta.url), CHILD_FLAG, config], {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    return await withTimeout(collectCache(child), TIMEOUT_MS, 'the child did not answer in time');
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

async function collectCache(child) {
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((done) => child.once('exit', (code, signal) => done({ code, signal })));
  const failed = (what) => new Error(`${what}\n${stdout}${stderr}`.trim());
  const url = await new Promise((done, fail) => {
    child.stdout.on('data', (d) => {
      stdout += d;
      const ready = /listening on (http:\/\/\S+)/.exec(stdout);
      if (ready) done(ready[1]);
    });
    exited.then(({ code, signal }) => fail(failed(`serve exited (${signal ?? code}) before it was ready`)));
  });
  const status = await new Promise((done, fail) =>
    get(`${url}/__mockapi/health`, (res) => done(res.resume().statusCode)).on('error', fail),
  );
  if (status !== 200) throw failed(`health answered ${status}`);
  const cache = await new Promise((done) => {
    child.once('message', done);
    child.send('write');
  });
  // Then stop it as a user would; the IPC channel would keep it alive.
  child.disconnect();
  child.kill('SIGTERM');
  const { code, signal } = await exited;
  if (code !== 0) throw failed(`serve exited with ${signal ?? code} after SIGTERM`);
  return cache;
}

/** The child: runs the bundle's `serve` as bin/mockapi.js would and sends its cache when asked. */
async function serveForCache(config) {
  const { compileCli, evaluateCli } = await import('../dist/cli/load-cli.js');
  // A cache made from a cached compile would hold only what that compile took from the old one.
  const compiled = compileCli({ useCache: false });
  process.once('message', () => process.send(Buffer.concat([compiled.key, compiled.script.createCachedData()])));
  await evaluateCli(compiled).run([
    process.execPath,
    'mockapi',
    'serve',
    '-c',
    config,
    '--port',
    '0',
    '--no-state',
    '--log',
    'off',
  ]);
  // When serve could not start: the IPC channel would keep this process alive.
  if (process.connected) process.disconnect();
}

function withTimeout(promise, ms, message) {
  let timer;
  const timeout = new Promise((_, fail) => (timer = setTimeout(() => fail(new Error(message)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
