import { X509Certificate, randomBytes, webcrypto } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureMockapiDir } from '../state/mockapi-dir.js';
import { sidePathFor, writeFileAtomic } from '../state/atomic-write.js';
import { EC_P256_SHA256, x509 } from './x509-lib.js';

/** How long a project's CA is valid: ten years. A CA that expired must be deleted to get a new one. */
export const CA_LIFETIME_MS = 10 * 365 * 24 * 3600 * 1000;
/** Certificates start an hour in the past, so a client whose clock is a little behind accepts them. */
export const BACKDATE_MS = 3600 * 1000;

/** Where a project's CA lives, beside its config: the certificate clients trust and the key that signs. */
export interface CaPaths {
  dir: string;
  /** `.mockapi/tls/ca.pem`: the CA certificate alone (what NODE_EXTRA_CA_CERTS points at). */
  certFile: string;
  /** `.mockapi/tls/ca-key.pem`, mode 0600: the private key, followed by the certificate it signed itself. */
  keyFile: string;
}

/** A project's CA as read back: PEM text of its certificate and its PKCS #8 private key. */
export interface ProjectCa extends CaPaths {
  certPem: string;
  keyPem: string;
}

/** Thrown when the CA cannot be made or read; the message says what to do. */
export class CaError extends Error {
  override name = 'CaError';
}

/** The CA's files for a config in `configDir`. */
export function caPaths(configDir: string): CaPaths {
  const dir = join(configDir, '.mockapi', 'tls');
  return { dir, certFile: join(dir, 'ca.pem'), keyFile: join(dir, 'ca-key.pem') };
}

function pemBlock(text: string, label: string): string | undefined {
  const match = new RegExp(`-----BEGIN ${label}-----[\\s\\S]+?-----END ${label}-----`).exec(text);
  return match === null ? undefined : `${match[0]}\n`;
}

async function generate(now: Date): Promise<string> {
  const lib = x509();
  const keys = await webcrypto.subtle.generateKey(EC_P256_SHA256, true, ['sign', 'verify']);
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f; // a positive serial number
  const cert = await lib.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial.toString('hex'),
    name: `CN=mockapi local CA ${serial.toString('hex').slice(0, 8)}, O=mockapi`,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + CA_LIFETIME_MS),
    signingAlgorithm: EC_P256_SHA256,
    keys,
    extensions: [
      new lib.BasicConstraintsExtension(true, 0, true),
      new lib.KeyUsagesExtension(lib.KeyUsageFlags.keyCertSign | lib.KeyUsageFlags.cRLSign, true),
      await lib.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const key = lib.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
  return `${key}\n${cert.toString('pem')}\n`;
}

/**
 * Creates the key file if there is none: written under a name of its own (mode 0600), then linked
 * to its place, which fails when the file exists. So of two servers starting at once, one CA wins
 * and the other reads it; an existing key file is never overwritten.
 */
async function createKeyFile(keyFile: string, now: Date): Promise<void> {
  const side = sidePathFor(keyFile);
  await writeFile(side, await generate(now), { mode: 0o600, flag: 'wx' });
  try {
    await link(side, keyFile);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await unlink(side).catch(() => {});
  }
}

/**
 * The project's CA under `<configDir>/.mockapi/tls/` (git-ignored with the rest of `.mockapi/`),
 * made on first use: an ECDSA P-256 key and a self-signed certificate valid for ten years.
 * Writes `ca.pem` again when it is missing or differs from the certificate kept with the key.
 */
export async function ensureProjectCa(configDir: string, now: Date = new Date()): Promise<ProjectCa> {
  await ensureMockapiDir(configDir);
  const paths = caPaths(configDir);
  await mkdir(paths.dir, { recursive: true, mode: 0o700 });
  let text: string;
  try {
    text = await readFile(paths.keyFile, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new CaError(`cannot read the local CA key ${paths.keyFile}: ${(err as Error).message}`);
    await createKeyFile(paths.keyFile, now);
    text = await readFile(paths.keyFile, 'utf8');
  }
  const keyPem = pemBlock(text, 'PRIVATE KEY');
  const certPem = pemBlock(text, 'CERTIFICATE');
  const broken = `the local CA key file ${paths.keyFile} is damaged; delete the folder ${paths.dir} to make a new CA (clients must then trust the new one)`;
  if (keyPem === undefined || certPem === undefined) throw new CaError(broken);
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    throw new CaError(broken);
  }
  if (Date.parse(cert.validTo) <= now.getTime()) {
    throw new CaError(
      `the local CA in ${paths.dir} expired on ${new Date(cert.validTo).toISOString()}; delete that folder to make a new one (clients must then trust the new one)`,
    );
  }
  const written = await readFile(paths.certFile, 'utf8').catch(() => undefined);
  if (written !== certPem) await writeFileAtomic(paths.certFile, certPem);
  return { ...paths, certPem, keyPem };
}
