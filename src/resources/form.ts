/**
 * Request bodies and query strings as a resource reads them: JSON, or form-encoded with brackets
 * as Stripe's SDK sends them (`metadata[order]=6735`, `items[0][price]=p_1`, `expand[]=customer`)
 * read into nested objects, an empty value (`metadata[key]=`) read as null (which removes a key).
 * Form values are text until {@link typeForm} gives them the type of the value they replace.
 * A key that could reach an object's prototype is refused, never used.
 */

type Obj = Record<string, unknown>;

/** Names that are never keys of anything made from a request. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
/** The highest list position a form key may name (`items[9999]`). */
export const MAX_FORM_INDEX = 9_999;
/** The deepest nesting a form key (`a[b][c]`: 3) or a JSON body's key may have. */
export const MAX_FORM_DEPTH = 32;

/** A body or query that cannot be read: the message and the parameter, for the style's 400. */
export class BadInput extends Error {
  constructor(
    message: string,
    readonly param: string | null,
  ) {
    super(message);
  }
}

/** A body or query nested deeper than {@link MAX_FORM_DEPTH}: the parameter is its first key. */
export class TooDeep extends BadInput {
  constructor(param: string) {
    super(`Parameter ${param} is nested more than ${MAX_FORM_DEPTH} levels deep`, param);
  }
}

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

/** A form's name or value as text: `+` a space, `%xx` escapes decoded; a malformed one kept as sent. */
export function decodeFormPart(text: string): string {
  const plus = text.includes('+');
  if (!plus && !text.includes('%')) return text; // most names and values: nothing to decode
  const spaced = plus ? text.replace(/\+/g, ' ') : text;
  try {
    return decodeAscii(spaced) ?? decodeURIComponent(spaced);
  } catch {
    return text;
  }
}

/** Hex digit values by character code (-1: not one). */
const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) HEX['0123456789abcdef'.charCodeAt(i)] = HEX['0123456789ABCDEF'.charCodeAt(i)] = i;
const hexOf = (code: number): number => (code < 128 ? (HEX[code] as number) : -1);

/**
 * `decodeURIComponent` of a text whose escapes are all ASCII (`%40`, `%20`: what forms mostly
 * hold), in a few string operations instead of V8's runtime call (about 3× faster); undefined for
 * any other escape (UTF-8 bytes, a malformed one), which `decodeURIComponent` then reads.
 */
function decodeAscii(text: string): string | undefined {
  let out = '';
  let last = 0;
  for (let at = text.indexOf('%'); at !== -1; at = text.indexOf('%', last)) {
    const high = hexOf(text.charCodeAt(at + 1));
    const low = hexOf(text.charCodeAt(at + 2));
    if (high < 0 || high > 7 || low < 0) return undefined;
    out += text.slice(last, at) + String.fromCharCode(high * 16 + low);
    last = at + 3;
  }
  return out + text.slice(last);
}

function isIndex(key: string): boolean {
  if (key.length === 0) return false;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
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
interface ReadName {
  /** The name as sent (decoded). */
  readonly text: string;
  /** Its key, when the name holds no `[`. */
  readonly key: string;
  /** Its keys, when it does. */
  readonly keys: readonly string[] | undefined;
}

/** The name of a pair as {@link put} writes it (`nested`: it holds a `[`), or the 400 of a name no pair may have. */
function readName(name: string, nested: boolean): ReadName {
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
function sentName(text: string, start: number, end: number, nested: boolean, place: number): ReadName {
  const known = place < LAST_NAMES_MAX ? lastNames[place] : undefined;
  if (known !== undefined && known.text.length === end - start && text.startsWith(known.text, start)) return known;
  const read = readName(text.slice(start, end), nested);
  if (place < LAST_NAMES_MAX && end - start <= KEY_LENGTH_MAX) lastNames[place] = read;
  return read;
}

/** Puts one pair; returns whether it made a list (whose holes are then filled). */
function put(root: Obj, name: ReadName, value: string | null): boolean {
  const { keys } = name;
  if (keys === undefined) {
    root[name.key] = value;
    return false;
  }
  let container: Obj | unknown[] = root;
  let lists = false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const last = i === keys.length - 1;
    const next = keys[i + 1];
    const wantsList = next !== undefined && (next === '' || isIndex(next));
    lists ||= wantsList;
    if (Array.isArray(container)) {
      if (key !== '' && (!isIndex(key) || Number(key) > MAX_FORM_INDEX))
        throw new BadInput(`Invalid array index in ${name.text}: use 0 to ${MAX_FORM_INDEX}`, keys[0] as string);
      const at: number = key === '' ? container.length : Number(key);
      if (last) container[at] = value;
      else {
        const existing: unknown = container[at];
        container =
          existing !== null && typeof existing === 'object'
            ? (existing as Obj | unknown[])
            : ((container[at] = wantsList ? [] : {}) as Obj | unknown[]);
      }
      continue;
    }
    if (last) {
      container[key] = value;
      continue;
    }
    const existing = container[key];
    if (existing !== null && typeof existing === 'object' && Array.isArray(existing) === wantsList)
      container = existing as Obj | unknown[];
    else container = (container[key] = wantsList ? [] : {}) as Obj | unknown[];
  }
  return lists;
}

/** Holes left by sparse indexes (`items[2]` without `items[1]`) become null, as JSON writes them. */
function fillHoles(value: unknown): unknown {
  if (Array.isArray(value)) return Array.from(value, (item) => (item === undefined ? null : fillHoles(item)));
  if (value !== null && typeof value === 'object')
    for (const key of Object.keys(value)) (value as Obj)[key] = fillHoles((value as Obj)[key]);
  return value;
}

/** A form-encoded text (body or query) as nested values; `emptyIsNull`: an empty value reads as null. */
export function parseForm(text: string, emptyIsNull: boolean): Obj {
  const root: Obj = {};
  let lists = false;
  // The pairs between `&`s (empty ones skipped), each cut at its first `=`; no list of the pairs
  // and no text of each pair (only its name and value are sliced). The characters that matter are
  // found with indexOf (a loop over each character costs several times more): each search goes
  // on from where its character was last found, so each one is found once, and what a part holds
  // (an escape, a `+`, a `[`) is known without searching the part again.
  const at = new Seeker(text);
  let place = 0; // of the pair in the form
  for (let start = 0; start <= text.length;) {
    let end = text.indexOf('&', start);
    if (end === -1) end = text.length;
    if (end > start) {
      const equals = at.next(SEEK_EQUALS, start);
      const eq = equals < end ? equals : -1;
      const nameEnd = eq === -1 ? end : eq;
      const nameCoded = at.coded(start, nameEnd);
      let name: ReadName;
      if (nameCoded === 0) name = sentName(text, start, nameEnd, at.next(SEEK_BRACKET, start) < nameEnd, place);
      else {
        const decoded = decodeCoded(text.slice(start, nameEnd), nameCoded);
        name = readName(decoded, decoded.includes('[')); // (an escaped `%5B` is a bracket too)
      }
      place++;
      let value = '';
      if (eq !== -1) {
        const valueCoded = at.coded(eq + 1, end);
        value = valueCoded === 0 ? text.slice(eq + 1, end) : decodeCoded(text.slice(eq + 1, end), valueCoded);
      }
      if (put(root, name, value === '' && emptyIsNull ? null : value)) lists = true;
    }
    start = end + 1;
  }
  return lists ? (fillHoles(root) as Obj) : root;
}

/** The characters {@link Seeker} finds, by their index in `found`. */
const SEEK_EQUALS = 0;
const SEEK_BRACKET = 1;
const SEEK_ESCAPE = 2;
const SEEK_PLUS = 3;
const SEEK_CHARACTERS = ['=', '[', '%', '+'] as const;

/**
 * Where the next `=`, `[`, `%` and `+` of a text lie from a position that only moves forward: a
 * character is searched for again only once the position has passed where it was found, so the
 * searches of a whole text find each character once.
 */
class Seeker {
  /** Where each character was last found (-1: none further; -2: not searched yet). */
  private readonly found = [-2, -2, -2, -2];

  constructor(private readonly text: string) {}

  /** The first `SEEK_CHARACTERS[which]` at or after `from` (`from` never smaller than before), or the text's length when none. */
  next(which: number, from: number): number {
    let found = this.found[which] as number;
    if (found === -2 || (found !== -1 && found < from))
      this.found[which] = found = this.text.indexOf(SEEK_CHARACTERS[which] as string, from);
    return found === -1 ? this.text.length : found;
  }

  /** What `start`–`end` holds to decode: CODED_* (0: nothing). */
  coded(start: number, end: number): number {
    return (
      (this.next(SEEK_ESCAPE, start) < end ? CODED_ESCAPE : 0) | (this.next(SEEK_PLUS, start) < end ? CODED_PLUS : 0)
    );
  }
}

/** What a form part holds to decode: a `%` escape, a `+` (a space). */
const CODED_ESCAPE = 1;
const CODED_PLUS = 2;

/** {@link decodeFormPart} of a part known to hold a `%` or a `+` (`coded` says which). */
function decodeCoded(text: string, coded: number): string {
  const spaced = (coded & CODED_PLUS) === 0 ? text : text.replace(/\+/g, ' ');
  if ((coded & CODED_ESCAPE) === 0) return spaced;
  try {
    return decodeAscii(spaced) ?? decodeURIComponent(spaced);
  } catch {
    return text;
  }
}

/**
 * Refuses a JSON value with a key that could reach a prototype, or nested more than
 * {@link MAX_FORM_DEPTH} keys deep, as a form key may be (`metadata` and 32 levels under it is
 * refused); returns the value. `depth`: the keys above `value`, the first of them `top` (the parameter a refusal names).
 */
export function checkKeys(value: unknown, path = '', depth = 0, top = ''): unknown {
  if (value === null || typeof value !== 'object') return value;
  const deep = depth === MAX_FORM_DEPTH;
  if (Array.isArray(value)) {
    if (deep && value.length > 0) throw new TooDeep(top);
    value.forEach((item, i) => checkKeys(item, `${path}[${i}]`, depth + 1, top));
    return value;
  }
  for (const key of Object.keys(value)) {
    const at = path === '' ? key : `${path}[${key}]`;
    if (FORBIDDEN_KEYS.has(key)) throw new BadInput(`Received unknown parameter: ${at}`, at);
    if (deep) throw new TooDeep(top);
    checkKeys((value as Obj)[key], at, depth + 1, top === '' ? key : top);
  }
  return value;
}

const isJsonType = (type: string): boolean => /^\s*application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(type);
const isFormType = (type: string): boolean =>
  type === 'application/x-www-form-urlencoded' || /^\s*application\/x-www-form-urlencoded\s*(;|$)/i.test(type);

/** What a request body holds: a mapping of fields, and whether it came as a form (its values then text). */
export interface ReadBody {
  fields: Obj;
  form: boolean;
}

/**
 * Reads a body by its content type (JSON, a form, or — without a type — whichever it looks like);
 * `jsonOnly` (GitHub's API, which reads no form): as JSON whatever the type, `Problems parsing
 * JSON` when it is not.
 */
export function readBody(bytes: Buffer | undefined, contentType: string | undefined, jsonOnly = false): ReadBody {
  if (bytes === undefined || bytes.length === 0) return { fields: {}, form: false };
  const text = bytes.toString('utf8');
  const type = contentType ?? '';
  const json = jsonOnly || (!isFormType(type) && (isJsonType(type) || /^\s*[[{]/.test(text)));
  if (!json) return { fields: parseForm(text, true), form: true };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    if (jsonOnly) throw new BadInput('Problems parsing JSON', null);
    throw new BadInput(`Invalid JSON in the request body: ${(err as Error).message}`, null);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new BadInput('The request body must be a JSON object', null);
  return { fields: checkKeys(value) as Obj, form: false };
}

/** A form's integer: an optional minus and decimal digits. */
const INTEGER = /^-?\d+$/;
/** A form's number: an optional minus, decimal digits and a fraction (`12.5`, `.5`, `3.`). */
const DECIMAL = /^-?(?:\d+\.?\d*|\.\d+)$/;

/**
 * Form values with the type of what they replace: a number where `hint` holds a number
 * (`amount=2000` → 2000; a whole number where the hint is one: `12.5` is refused where it is 0), `true`/`false` where it holds a boolean, nested by the hint's own
 * nesting; text (or null) everywhere else. A value that cannot be read as its type is refused.
 * A mapping or list in which nothing changes type is given back as it is (no copy): most form
 * fields stay text, and a create then allocates nothing here. Neither `value` nor the result is
 * changed afterwards by any caller.
 */
export function typeForm(value: unknown, hint: unknown, param: string): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value === 'string') {
    if (typeof hint === 'number') {
      // Decimal digits only (Number() would also read `0x10`, `1e3`, ` 5`, `Infinity`); whole ones where the hint is.
      const integer = Number.isInteger(hint);
      const n = (integer ? INTEGER : DECIMAL).test(value) ? Number(value) : NaN;
      if (integer ? !Number.isSafeInteger(n) : !Number.isFinite(n))
        throw new BadInput(`Invalid ${integer ? 'integer' : 'number'}: ${value}`, param);
      return n;
    }
    if (typeof hint === 'boolean') {
      if (value === 'true' || value === 'false') return value === 'true';
      throw new BadInput(`Invalid boolean: ${value}`, param);
    }
    return value;
  }
  if (Array.isArray(value)) {
    const itemHint = Array.isArray(hint) ? hint[0] : undefined;
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const typed = typeForm(item, itemHint, `${param}[${i}]`);
      if (typed !== item) (out ??= value.slice())[i] = typed;
    }
    return out ?? value;
  }
  if (typeof value === 'object') {
    const hints = hint !== null && typeof hint === 'object' && !Array.isArray(hint) ? (hint as Obj) : undefined;
    let out: Obj | undefined;
    for (const key of Object.keys(value)) {
      const item = (value as Obj)[key];
      const hinted = hints !== undefined && Object.hasOwn(hints, key);
      const typed =
        typeof item === 'string' && !hinted
          ? item // text without a hint stays text
          : typeForm(item, hinted ? hints[key] : undefined, paramOf(param, key));
      if (typed !== item) (out ??= { ...(value as Obj) })[key] = typed;
    }
    return out ?? value;
  }
  return value;
}

const paramOf = (param: string, key: string): string => (param === '' ? key : `${param}[${key}]`);
