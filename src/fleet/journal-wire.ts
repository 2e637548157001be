import type { JournalEntry } from '../control/journal-entry.js';

/**
 * The journal's entries in the fleet's Redis Stream. Format 2 (written by this version): one stream
 * entry per write call (an event-loop turn of one host), fields `v` (`2`), `h` (the host that
 * answered) and `e` (the call's entries as the admin API shows them, redacted — no key is ever in
 * Redis —, one JSON text a line). The stream id `0-<n>` is the id of the first; the others follow,
 * one each, and the stream's last id is set past the last, so the next call (or any other writer)
 * goes on above them: one order for the whole fleet. Format 1 (an older mockapi): one entry per
 * stream entry, `e` its JSON text; still read, so hosts can be upgraded one at a time.
 */
export const ENTRY_FORMAT = '2';
/** The formats this version reads. */
const READS = ['1', ENTRY_FORMAT];

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

/** The entries of one stream entry (`[id, [field, value, …]]`), in order; never throws. */
export function readStreamEntry(raw: unknown): ReadEntry[] {
  const [id, fields] = Array.isArray(raw) ? (raw as [unknown, unknown]) : [undefined, undefined];
  const seq = typeof id === 'string' ? streamSeq(id) : Number.NaN;
  const values = new Map<string, string>();
  if (Array.isArray(fields))
    for (let i = 0; i + 1 < fields.length; i += 2) values.set(String(fields[i]), String(fields[i + 1]));
  const format = values.get('v');
  const text = values.get('e');
  if (format === undefined || !READS.includes(format) || text === undefined)
    return [
      {
        ok: false,
        id: seq,
        why: format === undefined || READS.includes(format) ? 'damaged' : 'format',
        ...(format === undefined || READS.includes(format) ? {} : { format }),
      },
    ];
  const host = values.get('h') ?? '';
  if (!Number.isSafeInteger(seq) || seq <= 0) return [{ ok: false, id: seq, why: 'damaged' }];
  if (format === '1') return [readOne(text, seq, host)];
  const out: ReadEntry[] = [];
  let at = 0;
  for (let n = seq; ; n++) {
    const end = text.indexOf('\n', at);
    out.push(readOne(end === -1 ? text.slice(at) : text.slice(at, end), n, host));
    if (end === -1) return out;
    at = end + 1;
  }
}

/** The id after the last entry of a stream entry: its first id plus the lines of a format-2 `e` (counted, not read). */
export function nextSeq(raw: unknown): number {
  const [id, fields] = Array.isArray(raw) ? (raw as [unknown, unknown]) : [undefined, undefined];
  const seq = typeof id === 'string' ? streamSeq(id) : Number.NaN;
  let format: string | undefined;
  let text: string | undefined;
  if (Array.isArray(fields))
    for (let i = 0; i + 1 < fields.length; i += 2) {
      if (String(fields[i]) === 'v') format = String(fields[i + 1]);
      else if (String(fields[i]) === 'e') text = String(fields[i + 1]);
    }
  let lines = 1;
  if (format === ENTRY_FORMAT && text !== undefined)
    for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines++;
  return Number.isSafeInteger(seq) ? seq + lines : 0;
}

function readOne(text: string, id: number, host: string): ReadEntry {
  let entry: unknown;
  try {
    entry = JSON.parse(text);
  } catch {
    return { ok: false, id, why: 'damaged' };
  }
  if (!isEntry(entry)) return { ok: false, id, why: 'damaged' };
  entry.id = id;
  return { ok: true, id, host, entry };
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
        ? `fleet: skipped journal entry ${skipped.id} (and any like it for a minute): it is in format ${skipped.format ?? '?'}, written by another version of mockapi; this host reads formats ${READS.join(' and ')}`
        : `fleet: skipped journal entry ${Number.isFinite(skipped.id) ? skipped.id : '?'} (and any like it for a minute): it is damaged`,
    );
  };
}
