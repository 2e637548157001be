import type { StreamConfig, StreamPreset } from './stream-model.js';

/**
 * How a preset's `text` is cut (`chunkBy`), and how many events each preset sends for it: the
 * config's rules bound a stream's events with these before it is served (config/rules-stream.ts),
 * and src/stream/presets.ts sends exactly these.
 */

/**
 * The characters a numeric `chunkBy` cuts: a whole number, at least 1. The config's rules refuse any
 * other, but these functions also run on what they refuse (to count a stream's events): a step of 0
 * or less would never end.
 */
function stepOf(by: number): number {
  return Number.isFinite(by) && by >= 1 ? Math.floor(by) : 1;
}

/**
 * Where each chunk of `text` starts (and, last, where the text ends), as `chunkText` splits it,
 * without making the chunks: a request's text can be long. Undefined as soon as there would be
 * more than `max` chunks.
 */
export function chunkBounds(text: string, by: StreamConfig['chunkBy'], max: number): number[] | undefined {
  const bounds: number[] = [];
  if (text === '') return [0];
  if (by === 'char' || typeof by === 'number') {
    const step = by === 'char' ? 1 : stepOf(by);
    let points = 0;
    for (let i = 0; i < text.length;) {
      if (points % step === 0) {
        if (bounds.length >= max) return undefined;
        bounds.push(i);
      }
      const code = text.charCodeAt(i);
      i += code >= 0xd800 && code <= 0xdbff && i + 1 < text.length ? 2 : 1; // a chunk never splits a surrogate pair
      points++;
    }
  } else {
    const word = /\s*\S+|\s+$/gu;
    let m: RegExpExecArray | null;
    while ((m = word.exec(text)) !== null) {
      if (bounds.length >= max) return undefined;
      bounds.push(m.index);
    }
    if (bounds.length === 0) bounds.push(0);
    else bounds[0] = 0; // chunkText keeps nothing before the first word only when the text has none
  }
  bounds.push(text.length);
  return bounds;
}

/** Splits `text` into the pieces a model would send: words with the spaces before them, characters, or n characters. */
export function chunkText(text: string, by: StreamConfig['chunkBy']): string[] {
  if (text === '') return [];
  const chars = Array.from(text); // code points: a chunk never splits a surrogate pair
  if (by === 'char') return chars;
  if (typeof by === 'number') {
    const step = stepOf(by);
    const out: string[] = [];
    for (let i = 0; i < chars.length; i += step) out.push(chars.slice(i, i + step).join(''));
    return out;
  }
  return text.match(/\s*\S+|\s+$/gu) ?? [text];
}

/** The number of events a preset sends for `chunks` text chunks (openai-chat: one more with its usage chunk). */
export function presetEventCount(preset: StreamPreset, chunks: number, includeUsage = false): number {
  return preset === 'openai-chat'
    ? chunks + 3 + (includeUsage ? 1 : 0)
    : preset === 'openai-responses'
      ? chunks + 8
      : chunks + 6;
}
