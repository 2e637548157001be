/** Thrown when HTTPS cannot be set up: a certificate and key that cannot be read or do not match, a damaged CA. */
export class TlsSetupError extends Error {
  override name = 'TlsSetupError';
}
