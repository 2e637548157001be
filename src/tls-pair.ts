// On the ground floor: the config's rules (config/rules-https.ts) check a pair with it before src/tls/ serves it.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** A certificate and its private key, PEM text as read from the files. */
export interface TlsPair {
  cert: string;
  key: string;
}

/** The pair, or what is wrong with it in words: an unreadable file, not a certificate or key, or a key that does not match. */
export type PairVerdict = { ok: true; pair: TlsPair } | { ok: false; problem: string; field: 'cert' | 'key' };

function readText(file: string, what: string): string | { problem: string } {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'is a folder'
            : (err as Error).message;
    return { problem: `cannot read the ${what} file ${file}: ${why}` };
  }
}

/**
 * Reads a user's certificate and key (absolute paths) and checks they belong together, with
 * node:crypto only. Names both files in every problem.
 */
export function readTlsPair(certFile: string, keyFile: string): PairVerdict {
  const cert = readText(certFile, 'certificate');
  if (typeof cert !== 'string') return { ok: false, problem: cert.problem, field: 'cert' };
  const key = readText(keyFile, 'key');
  if (typeof key !== 'string') return { ok: false, problem: key.problem, field: 'key' };
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch {
    return { ok: false, problem: `${certFile} is not a PEM certificate`, field: 'cert' };
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    return {
      ok: false,
      problem: `${keyFile} is not a PEM private key (an encrypted key is not supported)`,
      field: 'key',
    };
  }
  if (!certificate.checkPrivateKey(privateKey))
    return { ok: false, problem: `the key ${keyFile} does not match the certificate ${certFile}`, field: 'key' };
  return { ok: true, pair: { cert, key } };
}
