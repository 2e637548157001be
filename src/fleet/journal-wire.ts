import type { JournalEntry } from '../control/journal-entry.js';

/**
 * The journal's entries in the fleet's Redis Stream: fields `v` (the format, 1), `h` (the host that
 * answered) and `e` (the entry as the admin API shows it, redacted: no key is ever in Redis). The
 * stream's id is `0-<n>`: `n` is the entry's id on every host, one order for the whole fleet.
 */
export const ENTRY_FORMAT = '1';

/** An entry read back: its id, the host that answered, and the view; or why it was skipped. */
export type ReadEntry =
  | { ok: true; id: number; host: string; entry: JournalEntry }
  | { ok: false; id: number; why: 'format' | 'damaged'; format?: string };

/** `0-<n>` → n. */
export function streamSeq(id: string): number {
  const dash = id.indexOf('-');
  return Number(dash === -1 ? id : id.slice(dash + 1));
}

function isEntry(v: unknown): v is JournalEntry {
  if (typeof v !== 'object' || v === null) return false;
  const e = v as Record<string, unknown>;
  return (
    typeof e.time === 'string' &&
    typeof e.method === 'string' &&
    typeof e.path === 'string' &&
    typeof e.status === 'number' &&
    typeof e.ms === 'number' &&
    typeof e.step === 'string' &&
    typeof e.headers === 'object' &&
    e.headers !== null &&
    typeof e.query === 'object' &&
    e.query !== null &&
    (e.endpoint === null || typeof e.endpoint === 'string') &&
    Array.isArray(e.notes)
  );
}

/** Reads one stream entry (`[id, [field, value, …]]`); never throws. */
export function readStreamEntry(raw: unknown): ReadEntry {
  const [id, fields] = Array.isArray(raw) ? (raw as [unknown, unknown]) : [undefined, undefined];
  const seq = typeof id === 'string' ? streamSeq(id) : Number.NaN;
  const values = new Map<string, string>();
  if (Array.isArray(fields))
    for (let i = 0; i + 1 < fields.length; i += 2) values.set(String(fields[i]), String(fields[i + 1]));
  const format = values.get('v');
  if (format !== ENTRY_FORMAT)
    return {
      ok: false,
      id: seq,
      why: format === undefined ? 'damaged' : 'format',
      ...(format === undefined ? {} : { format }),
    };
  let entry: unknown;
  try {
    entry = JSON.parse(values.get('e') ?? '');
  } catch {
    return { ok: false, id: seq, why: 'damaged' };
  }
  if (!Number.isSafeInteger(seq) || seq <= 0 || !isEntry(entry)) return { ok: false, id: seq, why: 'damaged' };
  entry.id = seq;
  return { ok: true, id: seq, host: values.get('h') ?? '', entry };
}

/**
 * Says on stderr, once per kind and at most once a minute, what a read skipped: entries written by
 * a newer mockapi (another format) or damaged. Never a crash: the rest is read on.
 */
export function createSkipNotes(
  warn: (message: string) => void,
  now: () => number = Date.now,
): (skipped: ReadEntry & { ok: false }) => void {
  const lastSaid = new Map<string, number>();
  return (skipped) => {
    const kind = skipped.why === 'format' ? `format ${skipped.format ?? '?'}` : 'damaged';
    const at = lastSaid.get(kind);
    if (at !== undefined && now() - at < 60_000) return;
    lastSaid.set(kind, now());
    warn(
      skipped.why === 'format'
        ? `fleet: skipped journal entry ${skipped.id} (and any like it for a minute): it is in format ${skipped.format ?? '?'}, written by another version of mockapi; this host reads format ${ENTRY_FORMAT}`
        : `fleet: skipped journal entry ${Number.isFinite(skipped.id) ? skipped.id : '?'} (and any like it for a minute): it is damaged`,
    );
  };
}
