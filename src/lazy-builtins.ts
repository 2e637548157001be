import { createRequire } from 'node:module';

/**
 * Node modules that a start of `serve` needs only when its config asks for them, loaded on first
 * use: `node:https` (and the `node:tls` under it: ~4 ms of CPU to load, for serving HTTPS, webhooks
 * to https: URLs and an upstream's own CA) and `node:zlib` (~1 ms, for an upstream's compressed
 * bodies). Through createRequire, as undici is (src/upstream/client.ts): the CLI bundle runs where
 * `import()` has no loader. Types come from the modules themselves.
 */
const load = createRequire(import.meta.url);

let httpsModule: typeof import('node:https') | undefined;
let tlsModule: typeof import('node:tls') | undefined;
let zlibModule: typeof import('node:zlib') | undefined;

export function https(): typeof import('node:https') {
  return (httpsModule ??= load('node:https') as typeof import('node:https'));
}

export function tls(): typeof import('node:tls') {
  return (tlsModule ??= load('node:tls') as typeof import('node:tls'));
}

export function zlib(): typeof import('node:zlib') {
  return (zlibModule ??= load('node:zlib') as typeof import('node:zlib'));
}
