/**
 * A form-encoded text (body or query) read into nested values: `metadata[order]=6735`,
 * `items[0][price]=p_1`, `expand[]=customer`, in one pass that finds each character it needs once.
 */
import { CODED_ESCAPE, CODED_PLUS, decodeCoded } from './form-decode.js';
import { BadInput, MAX_FORM_INDEX } from './form-limits.js';
import { readName, sentName, type ReadName } from './form-names.js';

type Obj = Record<string, unknown>;

function isIndex(key: string): boolean {
  if (key.length === 0) return false;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
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
