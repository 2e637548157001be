import { createRedactor, type Redactor } from './redactor.js';

const INNER = Symbol('redactor without extra secrets');

/**
 * `base` that also scrubs `secrets` (webhook signing secrets): the one redactor, told of more
 * secrets than the key. Its `rotated` keeps the secrets; wrapping a wrapper replaces its secrets
 * (a reload gives the secrets of the new config) instead of nesting.
 */
export function withSecrets(base: Redactor, secrets: readonly string[]): Redactor {
  const inner = (base as Redactor & { [INNER]?: Redactor })[INNER] ?? base;
  if (secrets.length === 0) return inner;
  const extra = createRedactor(secrets);
  const wrapped: Redactor & { [INNER]: Redactor } = {
    scrub: (text) => extra.scrub(inner.scrub(text)),
    isSecretHeader: (name) => inner.isSecretHeader(name),
    isSecretQuery: (name) => inner.isSecretQuery(name),
    rotated: (key, others) => withSecrets(inner.rotated(key, others), secrets),
    withPlaces: (places) => withSecrets(inner.withPlaces(places), secrets),
    [INNER]: inner,
  };
  return wrapped;
}
