import type { HttpsConfig } from '../config/types.js';
import type { TlsCredentials } from '../http/http-limits.js';
import { issueLeaf, leafNames } from './leaf.js';
import { readTlsPair } from '../tls-pair.js';
import { CaError, ensureProjectCa } from './project-ca.js';
import { TlsSetupError } from './tls-error.js';

/** What an HTTPS listener serves with; `ca` and `caFile` when the project's CA signed the certificate. */
export interface PreparedHttps {
  credentials: TlsCredentials;
  /** PEM of the project's CA certificate. */
  ca?: string;
  /** `.mockapi/tls/ca.pem`. */
  caFile?: string;
}

/**
 * The certificate an HTTPS listener serves: the user's own (`cert` and `key`, checked to be
 * readable and to match), or a fresh one signed by the project's CA in `configDir`, made for
 * localhost, 127.0.0.1, ::1, `bindHost` and `https.hosts`. Loads the certificate library only then.
 */
export async function prepareHttps(
  https: HttpsConfig,
  where: { configDir: string; bindHost: string; now?: Date },
): Promise<PreparedHttps> {
  if (https.cert !== undefined || https.key !== undefined) {
    if (https.cert === undefined || https.key === undefined) {
      throw new TlsSetupError(
        https.cert === undefined
          ? `the key ${https.key} needs its certificate (--tls-cert or server.https.cert)`
          : `the certificate ${https.cert} needs its key (--tls-key or server.https.key)`,
      );
    }
    const verdict = readTlsPair(https.cert, https.key);
    if (!verdict.ok) throw new TlsSetupError(verdict.problem);
    return { credentials: verdict.pair };
  }
  try {
    const ca = await ensureProjectCa(where.configDir, where.now);
    const credentials = await issueLeaf(ca, leafNames(where.bindHost, https.hosts), where.now);
    return { credentials, ca: ca.certPem, caFile: ca.certFile };
  } catch (err) {
    if (err instanceof CaError) throw new TlsSetupError(err.message);
    throw err;
  }
}
