import { createRequire } from 'node:module';
import { webcrypto } from 'node:crypto';

/** The part of @peculiar/x509 (1.x) mockapi uses. */
export type X509Lib = typeof import('@peculiar/x509');

let loaded: X509Lib | undefined;

/**
 * Loads @peculiar/x509 the first time HTTPS needs a generated certificate: a start without HTTPS,
 * or with a certificate of its own, never loads it. Loaded with require (also from the bundled CLI,
 * where a real import() cannot run, see scripts/bundle.mjs), and given Node's WebCrypto.
 */
export function x509(): X509Lib {
  if (loaded === undefined) {
    const lib = createRequire(import.meta.url)('@peculiar/x509') as X509Lib;
    // Node's webcrypto is the Web Crypto the library expects; its type is the DOM's `Crypto`, not in this build's libs.
    lib.cryptoProvider.set(webcrypto as never);
    loaded = lib;
  }
  return loaded;
}

/** ECDSA on P-256 signing with SHA-256: the only algorithm mockapi's certificates use. */
export const EC_P256_SHA256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
