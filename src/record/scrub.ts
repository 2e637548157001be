import type { RecordingConfig } from '../config/types.js';
import { createRedactor, REDACTED, type Redactor } from '../redact/redactor.js';
import { redactSecretFields, type SecretField } from '../redact/json-fields.js';
import { isNumericSecretName, isSecretName } from '../redact/secret-names.js';
import { replaceSecretShapes } from '../redact/secret-shapes.js';

/** `?name=value` and `&name=value` in a URL: a secret-named parameter's value is redacted. */
const QUERY_PARAM = /([?&;])([A-Za-z0-9_.\-[\]]{1,100})=([^&#\s"'<>]*)/g;

/** What a scrubber replaced, for the summary: counts by reason. */
export type RedactionCounts = Map<string, number>;

/**
 * Redacts recorded text and JSON before anything is kept: known credentials (the mock's key, the
 * upstream's secrets, in every encoding the one redactor knows), fields named like secrets and the
 * user's `recording.redact.fields`, known secret shapes and `recording.redact.patterns`.
 */
export interface Scrubber {
  text(value: string): string;
  json(value: unknown): unknown;
  /** JSON text of any layout and size: secret-named fields redacted in place (the layout kept), then {@link text}. */
  jsonText(value: string): string;
  /** A kept header: its value redacted whole when its name is a secret's, else {@link text}. */
  header(name: string, value: string): string;
  /** Whether the value under `name` (of this kind) is a secret: what the final scan checks. */
  readonly secretField: SecretField;
  readonly counts: RedactionCounts;
  /** Whether `value` holds something {@link text} would redact (nothing is counted). */
  peek(value: string): boolean;
  /** Whether a field of this name holds secrets (named like one, or in `recording.redact.fields`). */
  secretName(name: string): boolean;
  /** The one redactor for the known credentials (the final scan uses it too). */
  readonly known: Redactor;
}

export function createScrubber(secrets: readonly string[], recording: RecordingConfig | undefined): Scrubber {
  const known = createRedactor(secrets);
  const fields = new Set((recording?.redactFields ?? []).map((f) => f.toLowerCase()));
  const patterns = (recording?.redactPatterns ?? []).map((p) => new RegExp(p, 'g'));
  const counts: RedactionCounts = new Map();
  const count = (reason: string) => counts.set(reason, (counts.get(reason) ?? 0) + 1);
  const secretName = (name: string): boolean => isSecretName(name) || fields.has(name.toLowerCase());

  function text(value: string): string {
    let out = known.scrub(value);
    if (out !== value) count('a credential of the mock or the upstream');
    const shapes = replaceSecretShapes(out, REDACTED);
    for (const kind of shapes.kinds) count(kind);
    out = shapes.text;
    if (out.includes('=')) {
      out = out.replace(QUERY_PARAM, (all, sep: string, name: string, v: string) => {
        if (v === '' || v === REDACTED || !secretName(name)) return all;
        count('a query parameter named like a secret');
        return `${sep}${name}=${REDACTED}`;
      });
    }
    for (const pattern of patterns) {
      out = out.replace(pattern, () => {
        count(`recording.redact.patterns ${pattern.source}`);
        return REDACTED;
      });
    }
    return out;
  }

  // Text under a field named like a secret; a number only under a field the user named, or one that
  // is a secret whatever it holds (a PIN): counters such as `tokens_used` stay replayable.
  const secretField: SecretField = (name, kind) =>
    fields.has(name.toLowerCase()) || (isSecretName(name) && (kind === 'string' || isNumericSecretName(name)));
  const reason = (name: string): string =>
    fields.has(name.toLowerCase()) ? `field ${name}` : 'a field named like a secret';

  function json(value: unknown, key?: string): unknown {
    const kind = typeof value === 'string' ? 'string' : typeof value === 'number' ? 'number' : undefined;
    if (key !== undefined && kind !== undefined && secretField(key, kind)) {
      count(reason(key));
      return REDACTED;
    }
    if (typeof value === 'string') return text(value);
    // A list under a secret name holds secrets: each of its items is read under that name.
    if (Array.isArray(value))
      return value.map((v) => json(v, key !== undefined && secretField(key, 'string') ? key : undefined));
    if (value !== null && typeof value === 'object') {
      // fromEntries: a field named `__proto__` stays an ordinary field
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, json(v, k)]));
    }
    return value;
  }

  const jsonText = (value: string): string =>
    text(redactSecretFields(value, secretField, REDACTED, (hit) => count(reason(hit.name))));

  function header(name: string, value: string): string {
    if (!secretName(name)) return text(value);
    count('a header named like a secret');
    return REDACTED;
  }

  function peek(value: string): boolean {
    if (known.scrub(value) !== value || replaceSecretShapes(value, REDACTED).kinds.length > 0) return true;
    return patterns.some((p) => {
      p.lastIndex = 0;
      return p.test(value);
    });
  }

  return { text, json: (v) => json(v), jsonText, header, secretField, counts, known, peek, secretName };
}
