import { createRedactor, type Redactor } from '../redact/redactor.js';
import type { ConfigRuntime } from '../answer/config-runtime.js';

const INNER = Symbol('redactor without the session keys');

/**
 * The keys made for sessions (`sessions.byKey`) that this process knows — made here, or sent by a
 * request its session's digest matched (a session made on another host of a fleet) — scrubbed from
 * the request log, the journal, the inspector and the event stream as the config's keys are. The
 * session keeps only its key's digest; this keeps the keys in memory for the scrubbing alone, and
 * lets go of one with its session.
 */
export interface SessionSecrets {
  /** A session's key, by its digest: scrubbed from now on. */
  add(digest: string, key: string): void;
  /** Whether the key is known already (a request's own key: most are). */
  has(key: string): boolean;
  /** The session whose key has this digest is gone. */
  drop(digest: string): void;
}

/**
 * Keeps the served config's redactor wrapped with the session keys: each change makes a new wrapper
 * (what was rendered with the one before is not reused), which builds its scrubber on first use, so
 * a burst of new sessions builds it once. A reload's new config is wrapped again.
 */
export function createSessionSecrets(runtime: ConfigRuntime): SessionSecrets {
  const keys = new Map<string, string>();
  const known = new Set<string>();

  function wrap(base: Redactor): Redactor {
    const inner = (base as Redactor & { [INNER]?: Redactor })[INNER] ?? base;
    if (keys.size === 0) return inner;
    const list = [...keys.values()];
    let extra: Redactor | undefined;
    const wrapped: Redactor & { [INNER]: Redactor } = {
      scrub: (text) => (extra ??= createRedactor(list)).scrub(inner.scrub(text)),
      isSecretHeader: (name) => inner.isSecretHeader(name),
      isSecretQuery: (name) => inner.isSecretQuery(name),
      // A reload compiles from these: the keys are added again to what it makes (see onSwap below).
      rotated: (key, others) => inner.rotated(key, others),
      withPlaces: (places) => inner.withPlaces(places),
      [INNER]: inner,
    };
    return wrapped;
  }
  const apply = (): void => {
    runtime.holder.current.redactor = wrap(runtime.holder.current.redactor);
  };
  // (a test's runtime may be a bare holder)
  if (typeof runtime.onSwap === 'function')
    runtime.onSwap(() => {
      if (keys.size > 0) apply();
    });
  return {
    add(digest, key) {
      if (keys.get(digest) === key) return;
      keys.set(digest, key);
      known.add(key);
      apply();
    },
    has: (key) => known.has(key),
    drop(digest) {
      const key = keys.get(digest);
      if (key === undefined) return;
      keys.delete(digest);
      known.delete(key);
      apply();
    },
  };
}
