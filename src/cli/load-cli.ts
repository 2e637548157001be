import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import type { run } from './cli.js';

/** The CLI bundled into one CommonJS file by scripts/bundle.mjs. */
export const BUNDLE_FILE = fileURLToPath(new URL('cli.bundle.cjs', import.meta.url));
/** V8's code cache for the bundle, made by the build: the bundle's key, then V8's data. */
export const CACHE_FILE = fileURLToPath(new URL('cli.bundle.cache', import.meta.url));

// The bundle is compiled as the body of a CommonJS module function. The header has a line of its
// own and lineOffset -1 takes it back out, so stack traces point at the bundle's own lines.
const HEAD = '(function (exports, require, module, __filename, __dirname) {\n';
const TAIL = '\n})';
const KEY_BYTES = 20;

export interface CompiledCli {
  script: Script;
  /** What a code cache for this source must start with. */
  key: Buffer;
  /** Whether V8 took the code cache (false when missing, made for other bytes, or rejected). */
  fromCache: boolean;
}

/**
 * The cache's key: SHA-1 of the exact source V8 compiles. V8 checks only the source's length and
 * runs the cached code of a same-length edit, so the loader compares this key first. SHA-1 is the
 * cheapest of node:crypto's hashes here (~0.35 ms for the bundle; SHA-256 0.40, MD5 0.74; the CLI
 * loads node:crypto at start anyway). It guards against stale files, not against an attacker, who
 * could as well edit the bundle.
 */
export function cacheKey(source: Uint8Array): Buffer {
  return createHash('sha1').update(source).digest();
}

/**
 * The source V8 compiles, HEAD + the bundle + TAIL, read into one buffer: made into one string by a
 * copy (the bundle is ASCII, scripts/bundle.mjs checks it, so its Latin-1 text is its text), not
 * decoded as UTF-8 and then joined into a string V8 copies again to compile.
 */
function readSource(): Buffer {
  const fd = openSync(BUNDLE_FILE, 'r');
  try {
    const size = fstatSync(fd).size;
    const source = Buffer.allocUnsafeSlow(HEAD.length + size + TAIL.length);
    source.write(HEAD, 0, 'latin1');
    for (let at = 0; at < size;) {
      const read = readSync(fd, source, HEAD.length + at, size - at, at);
      if (read === 0) throw new Error(`${BUNDLE_FILE} ended early`);
      at += read;
    }
    source.write(TAIL, HEAD.length + size, 'latin1');
    return source;
  } finally {
    closeSync(fd);
  }
}

function readCache(file: string, key: Buffer): Buffer | undefined {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch {
    return undefined;
  }
  return data.length > KEY_BYTES && key.equals(data.subarray(0, KEY_BYTES)) ? data.subarray(KEY_BYTES) : undefined;
}

/**
 * Compiles the bundle, from the code cache when the cache was made from these exact bytes (by this
 * V8 with these flags, which V8 checks itself); otherwise a normal compile, silently.
 */
export function compileCli(options: { useCache?: boolean } = {}): CompiledCli {
  const source = readSource();
  const key = cacheKey(source);
  const cachedData = options.useCache === false ? undefined : readCache(CACHE_FILE, key);
  const script = new Script(source.toString('latin1'), {
    filename: BUNDLE_FILE,
    lineOffset: -1,
    cachedData,
  });
  return { script, key, fromCache: cachedData !== undefined && !script.cachedDataRejected };
}

/** Runs the compiled bundle as a CommonJS module and returns its exports. */
export function evaluateCli(compiled: CompiledCli): { run: typeof run } {
  const module = { exports: {} as { run: typeof run } };
  const wrapper = compiled.script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(module.exports, module.exports, createRequire(BUNDLE_FILE), module, BUNDLE_FILE, dirname(BUNDLE_FILE));
  return module.exports;
}

/**
 * What bin/mockapi.js runs: the CLI, compiled from the code cache when it fits. Under
 * `node --enable-source-maps` the bundle is required instead: Node 20 maps stack traces of modules
 * it loads itself, not of a vm.Script.
 */
export function loadCli(): { run: typeof run } {
  if (process.sourceMapsEnabled) return createRequire(import.meta.url)(BUNDLE_FILE) as { run: typeof run };
  return evaluateCli(compileCli());
}
