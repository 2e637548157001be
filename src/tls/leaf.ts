import { randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import type { TlsPair } from '../tls-pair.js';
import type { ProjectCa } from './project-ca.js';
import { BACKDATE_MS } from './project-ca.js';
import { EC_P256_SHA256, x509 } from './x509-lib.js';

/** How long a server certificate made at a start is valid: seven days (a restart makes a new one). */
export const LEAF_LIFETIME_MS = 7 * 24 * 3600 * 1000;

/** Names every generated server certificate carries, besides the bound host and `server.https.hosts`. */
export const LOCAL_NAMES = ['localhost', '127.0.0.1', '::1'] as const;

/**
 * The names a server certificate is made for: {@link LOCAL_NAMES}, the bound host (unless it is a
 * wildcard address, which no client connects to by name) and the extra `hosts`, each once.
 */
export function leafNames(bindHost: string, hosts: readonly string[]): string[] {
  const names = new Set<string>(LOCAL_NAMES);
  if (bindHost !== '0.0.0.0' && bindHost !== '::' && bindHost !== '') names.add(bindHost);
  for (const host of hosts) names.add(host);
  return [...names];
}

function pkcs8Pem(der: ArrayBuffer): string {
  return `${x509().PemConverter.encode(der, 'PRIVATE KEY')}\n`;
}

/**
 * A fresh server certificate signed by the project's CA: a new ECDSA P-256 key (kept in memory
 * only), SHA-256, valid from an hour before `now` for {@link LEAF_LIFETIME_MS}, for `names` (IP
 * addresses as IP entries, the rest as DNS names). Returns the certificate alone (a client must already trust the CA; sending it would not help) and the key.
 */
export async function issueLeaf(ca: ProjectCa, names: readonly string[], now: Date = new Date()): Promise<TlsPair> {
  const lib = x509();
  const caCert = new lib.X509Certificate(ca.certPem);
  const caKeyDer = lib.PemConverter.decodeFirst(ca.keyPem);
  const caKey = await webcrypto.subtle.importKey('pkcs8', caKeyDer, EC_P256_SHA256, false, ['sign']);
  const keys = await webcrypto.subtle.generateKey(EC_P256_SHA256, true, ['sign', 'verify']);
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const cert = await lib.X509CertificateGenerator.create({
    serialNumber: serial.toString('hex'),
    subject: 'CN=mockapi local server',
    issuer: caCert.subject,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + LEAF_LIFETIME_MS),
    signingAlgorithm: EC_P256_SHA256,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [
      new lib.BasicConstraintsExtension(false, undefined, true),
      new lib.KeyUsagesExtension(lib.KeyUsageFlags.digitalSignature, true),
      new lib.ExtendedKeyUsageExtension([lib.ExtendedKeyUsage.serverAuth]),
      new lib.SubjectAlternativeNameExtension(
        names.map((name) =>
          isIP(name) === 0 ? { type: 'dns' as const, value: name } : { type: 'ip' as const, value: name },
        ),
      ),
      await lib.AuthorityKeyIdentifierExtension.create(caCert),
      await lib.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    cert: `${cert.toString('pem')}\n`,
    key: pkcs8Pem(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)),
  };
}
