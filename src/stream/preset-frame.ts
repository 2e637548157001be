import type { PlainEvent, PresetParts } from './presets.js';

/** Stand-ins for a chunk's text and its place, framed once. */
const TEXT = '\u0000mockapi chunk text\u0000';
const INDEX = '\u0000mockapi chunk index\u0000';
/** How the stand-ins appear in framed JSON (strings, quoted and escaped). */
const TEXT_JSON = JSON.stringify(TEXT);
const INDEX_JSON = JSON.stringify(INDEX);

/**
 * Frames a preset stream. The events of the text chunks (all but a few of a stream) differ only in
 * their text and place, so one of them is framed with stand-ins and each chunk's JSON is put in
 * their place: byte for byte what framing each event gives, at the cost of one small
 * `JSON.stringify` a chunk instead of the whole event's.
 */
export function framePreset(
  parts: PresetParts,
  chunks: readonly string[],
  frame: (event: PlainEvent) => string,
): string[] {
  const at = presetFramer(parts, chunks.length, (i) => chunks[i] as string, frame);
  return Array.from({ length: parts.head.length + chunks.length + parts.tail.length }, (_, i) => at(i));
}

/**
 * The same framing one event at a time, as it is sent: event `i` of the stream (head, one per
 * chunk, tail), each chunk read through `chunkAt` only when its event is framed.
 */
export function presetFramer(
  parts: PresetParts,
  count: number,
  chunkAt: (i: number) => string,
  frame: (event: PlainEvent) => string,
): (i: number) => string {
  const first = parts.head.length;
  let pieces = templateOf(frame(parts.delta(TEXT, INDEX as unknown as number)));
  // Checked on the first chunk: a value of the request equal to a stand-in would make a wrong slot.
  if (
    pieces !== undefined &&
    count > 0 &&
    fill(pieces, JSON.stringify(chunkAt(0)), first) !== frame(parts.delta(chunkAt(0), first))
  )
    pieces = undefined;
  const delta =
    pieces === undefined
      ? (j: number) => frame(parts.delta(chunkAt(j), first + j))
      : (j: number) => fill(pieces, JSON.stringify(chunkAt(j)), first + j);
  return (i) => {
    if (i < first) return frame(parts.head[i] as PlainEvent);
    if (i < first + count) return delta(i - first);
    return frame(parts.tail[i - first - count] as PlainEvent);
  };
}

/** The framed event cut at its stand-ins: text pieces, and which stand-in comes after each but the last. */
interface Pieces {
  readonly text: readonly string[];
  readonly slots: ReadonlyArray<'text' | 'index'>;
}

function templateOf(framed: string): Pieces | undefined {
  const text: string[] = [];
  const slots: Array<'text' | 'index'> = [];
  let at = 0;
  for (;;) {
    const t = framed.indexOf(TEXT_JSON, at);
    const n = framed.indexOf(INDEX_JSON, at);
    if (t < 0 && n < 0) break;
    const isText = t >= 0 && (n < 0 || t < n);
    const where = isText ? t : n;
    text.push(framed.slice(at, where));
    slots.push(isText ? 'text' : 'index');
    at = where + (isText ? TEXT_JSON : INDEX_JSON).length;
  }
  text.push(framed.slice(at));
  // The text in exactly one place and the index in at most one (a request's `model` could hold a
  // stand-in, however unlikely); anything else is framed event by event.
  const count = (kind: 'text' | 'index'): number => slots.filter((s) => s === kind).length;
  return count('text') === 1 && count('index') <= 1 ? { text, slots } : undefined;
}

function fill(pieces: Pieces, textJson: string, index: number): string {
  let out = pieces.text[0] as string;
  for (let i = 0; i < pieces.slots.length; i++)
    out += (pieces.slots[i] === 'text' ? textJson : String(index)) + (pieces.text[i + 1] as string);
  return out;
}
