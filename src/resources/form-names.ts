/**
 * A form's names as property keys: `a[b][0]` split at its brackets, each key V8's own key string
 * (kept across requests), a forbidden or malformed name refused, and the names of the last forms
 * read kept by their place in the form.
 */
import { BadInput, FORBIDDEN_KEYS, MAX_FORM_DEPTH, TooDeep } from './form-limits.js';

/** `a[b][0][]` → `['a', 'b', '0', '']`; undefined when the brackets are not well formed. */
export function bracketKeys(name: string): string[] | undefined {
  const open = name.indexOf('[');
  if (open === -1) return [name];
  if (open === 0 || !name.endsWith(']')) return undefined;
  const keys = [name.slice(0, open)];
  // `[key]` after `[key]` to the end, none holding a bracket.
  for (let at = open; at < name.length;) {
    if (name.charCodeAt(at) !== 0x5b) return undefined; // [
    const close = name.indexOf(']', at + 1);
    if (close === -1) return undefined;
    const key = name.slice(at + 1, close);
    if (key.includes('[')) return undefined;
    keys.push(key);
    at = close + 1;
  }
  return keys;
}
/** Form names kept by {@link keyOf}, each as the key of its own text. */
const knownKeys = new Map<string, string>();
/** At most this many names are kept (a full cache starts over), none longer than {@link KEY_LENGTH_MAX}. */
const KNOWN_KEYS_MAX = 1_000;
const KEY_LENGTH_MAX = 64;

/**
 * A form name as a property key: the same text, as V8's own key string. A name sliced from a body
 * is a new string each request, which V8 looks up in its table of keys on every store or load by
 * it (~100 ns each on a create's path); the key kept here is that table's, found by one map lookup.
 */
function keyOf(name: string): string {
  if (name.length > KEY_LENGTH_MAX) return name;
  let key = knownKeys.get(name);
  if (key === undefined) {
    if (knownKeys.size >= KNOWN_KEYS_MAX) knownKeys.clear();
    key = Object.keys({ [name]: 0 })[0] as string; // (the key of an object: V8's own string)
    knownKeys.set(key, key);
  }
  return key;
}

/**
 * A form name as {@link put} writes it: the key of a plain name, or the keys of a bracketed one
 * (`a[b][0]` → `a`, `b`, `0`), each V8's own key string. Made by {@link readName}, which refuses a
 * name no pair may have.
 */
export interface ReadName {
  /** The name as sent (decoded). */
  readonly text: string;
  /** Its key, when the name holds no `[`. */
  readonly key: string;
  /** Its keys, when it does. */
  readonly keys: readonly string[] | undefined;
}

/** The name of a pair as {@link put} writes it (`nested`: it holds a `[`), or the 400 of a name no pair may have. */
export function readName(name: string, nested: boolean): ReadName {
  if (!nested) {
    const key = keyOf(name);
    if (FORBIDDEN_KEYS.has(key)) throw new BadInput(`Received unknown parameter: ${name}`, name);
    return { text: name, key, keys: undefined };
  }
  const keys = bracketKeys(name);
  if (keys === undefined) throw new BadInput(`Invalid parameter name: ${name}`, name);
  if (keys.length > MAX_FORM_DEPTH) throw new TooDeep(keys[0] as string);
  for (const key of keys) if (FORBIDDEN_KEYS.has(key)) throw new BadInput(`Received unknown parameter: ${name}`, name);
  for (let i = 0; i < keys.length; i++) keys[i] = keyOf(keys[i] as string);
  return { text: name, key: '', keys };
}

/**
 * The names of the last forms read, by their place in the form: a client sends the same names in
 * the same order (one API call's form), so a name is compared where it lies in the text with the
 * one read there before, instead of being sliced, split, hashed and looked up again. Names sent
 * escaped are read each time.
 */
const lastNames: Array<ReadName | undefined> = [];
/** Only the first pairs of a form, and names no longer than {@link KEY_LENGTH_MAX}, are kept. */
const LAST_NAMES_MAX = 32;

/** The name of pair `place` of a form, sent unescaped at `start`–`end` of `text` (`nested`: it holds a `[`). */
export function sentName(text: string, start: number, end: number, nested: boolean, place: number): ReadName {
  const known = place < LAST_NAMES_MAX ? lastNames[place] : undefined;
  if (known !== undefined && known.text.length === end - start && text.startsWith(known.text, start)) return known;
  const read = readName(text.slice(start, end), nested);
  if (place < LAST_NAMES_MAX && end - start <= KEY_LENGTH_MAX) lastNames[place] = read;
  return read;
}
