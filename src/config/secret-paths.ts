import { isSecretName } from '../redact/secret-names.js';
import type { FieldPath } from './field-path.js';

/**
 * Whether the value at `path` is a secret, whatever its YAML type: `apiKey`, `keys[N].key`, a
 * webhook target's `sign.secret`, `upstream.auth.value`, and an `upstream.headers` entry named like
 * a credential. A config error at such a path never shows the value (an unquoted number is echoed
 * by YAML's reading of it otherwise), nor anything under it.
 */
export function isSecretConfigPath(path: FieldPath): boolean {
  const [first, second, third, fourth, fifth] = path;
  if (first === 'apiKey') return true;
  if (first === 'keys' && typeof second === 'number' && third === 'key') return true;
  if (first === 'webhooks' && second === 'targets' && fourth === 'sign' && fifth === 'secret') return true;
  if (first === 'upstream' && second === 'auth' && third === 'value') return true;
  if (first === 'upstream' && second === 'headers' && typeof third === 'string' && isSecretName(third)) return true;
  return false;
}
