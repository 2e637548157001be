import type { RecordingConfig } from '../config/types.js';
import { createRedactor, REDACTED, type Redactor } from '../redact/redactor.js';
import { replaceSecretShapes } from '../redact/secret-shapes.js';

/** Field names whose values are secrets whatever they hold. */
const SECRET_FIELD = /pass(?:word|wd|phrase)?$|secret|token|api[_-]?key|apikey|auth(?:orization)?$|cookie|signature|credential|private[_-]?key|session[_-]?id|^otp$|^pin$|^cvc$|^cvv$/i;

/** Fields whose numbers are secrets too. */
const NUMERIC_SECRET = /pass(?:word|wd|code)?$|^pin$|^cvc$|^cvv$|^otp$/i;

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

  function text(value: string): string {
    let out = known.scrub(value);
    if (out !== value) count('a credential of the mock or the upstream');
    const shapes = replaceSecretShapes(out, REDACTED);
    for (const kind of shapes.kinds) count(kind);
    out = shapes.text;
    for (const pattern of patterns) {
      out = out.replace(pattern, () => {
        count(`recording.redact.patterns ${pattern.source}`);
        return REDACTED;
      });
    }
    return out;
  }

  function json(value: unknown, key?: string): unknown {
    // Text under a field named like a secret; a number only under a field the user named, or one that
    // is a secret whatever it holds (a PIN): counters such as `tokens_used` stay replayable.
    const scalar = typeof value === 'string' || typeof value === 'number';
    const named = key !== undefined && scalar && (fields.has(key.toLowerCase()) || (SECRET_FIELD.test(key) && (typeof value === 'string' || NUMERIC_SECRET.test(key))));
    if (named) {
      count(fields.has((key as string).toLowerCase()) ? `field ${key}` : 'a field named like a secret');
      return REDACTED;
    }
    if (typeof value === 'string') return text(value);
    if (Array.isArray(value)) return value.map((v) => json(v));
    if (value !== null && typeof value === 'object') {
      // fromEntries: a field named `__proto__` stays an ordinary field
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, json(v, k)]));
    }
    return value;
  }

  function peek(value: string): boolean {
    if (known.scrub(value) !== value || replaceSecretShapes(value, REDACTED).kinds.length > 0) return true;
    return patterns.some((p) => {
      p.lastIndex = 0;
      return p.test(value);
    });
  }

  const secretName = (name: string) => SECRET_FIELD.test(name) || fields.has(name.toLowerCase());

  return { text, json: (v) => json(v), counts, known, peek, secretName };
}
