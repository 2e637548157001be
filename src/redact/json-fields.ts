/**
 * Secret-named fields of JSON text, found (or replaced) by reading its tokens, whatever its layout
 * (compact, pretty-printed, spaced) and size: nothing is parsed into objects, so a 200 MiB body
 * costs one pass and no tree. A string under a secret name is a secret; so is each string of a list
 * under one (`"tokens": ["…", "…"]`, nested lists too); a number only where `secret(name, 'number')`
 * says so.
 */

/** Whether the value under `name` of this kind is a secret. */
export type SecretField = (name: string, kind: 'string' | 'number') => boolean;

/** One secret value found: the field's name and where its value starts and ends in the text. */
export interface FieldHit {
  readonly name: string;
  readonly start: number;
  readonly end: number;
}

interface Frame {
  readonly array: boolean;
  /** The name a list (and the lists inside it) is under, when it is a secret name. */
  readonly under: string | undefined;
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** The index just past the string starting at `start` (a `"`), or -1 when it never ends. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const quote = text.indexOf('"', i);
    if (quote === -1) return -1;
    let slashes = 0;
    for (let j = quote - 1; j > start && text.charCodeAt(j) === 0x5c; j--) slashes++;
    if (slashes % 2 === 0) return quote + 1;
    i = quote + 1;
  }
}

/** The index just past a number, `true`, `false` or `null` starting at `start`. */
function atomEnd(text: string, start: number): number {
  let i = start;
  while (i < text.length && /[-+.\w]/.test(text[i] as string)) i++;
  return i;
}

/**
 * The secret values of JSON `text`, in order, or undefined when `text` is not JSON (it then is
 * left to the text redactor). Invalid JSON found past the start is read as far as it goes.
 */
export function findSecretFields(text: string, secret: SecretField): FieldHit[] | undefined {
  let i = 0;
  while (i < text.length && WS.has(text.charCodeAt(i))) i++;
  const first = text[i];
  if (first !== '{' && first !== '[') return undefined;
  const hits: FieldHit[] = [];
  const stack: Frame[] = [];
  let key: string | undefined; // the name the next value is under (in an object)
  let expectKey = false;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (WS.has(c) || c === 0x2c /* , */) {
      if (c === 0x2c && stack.at(-1)?.array === false) expectKey = true;
      continue;
    }
    const top = stack.at(-1);
    const name = top === undefined ? undefined : top.array ? top.under : key;
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const array = c === 0x5b;
      stack.push({ array, under: array && name !== undefined && secret(name, 'string') ? name : undefined });
      expectKey = !array;
      key = undefined;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      expectKey = false;
      key = undefined;
    } else if (c === 0x3a /* : */) {
      expectKey = false;
    } else if (c === 0x22 /* " */) {
      const end = stringEnd(text, i);
      if (end === -1) break;
      if (expectKey && top?.array === false) key = JSON.parse(text.slice(i, end)) as string;
      else if (name !== undefined && secret(name, 'string')) hits.push({ name, start: i, end });
      i = end - 1;
    } else {
      const end = atomEnd(text, i);
      if (end === i) break; // not JSON from here on
      if (name !== undefined && /^-?\d/.test(text.slice(i, i + 2)) && secret(name, 'number'))
        hits.push({ name, start: i, end });
      i = end - 1;
    }
  }
  return hits;
}

/** `text` with each secret value replaced by the JSON string `replacement`; `text` itself when none. */
export function redactSecretFields(
  text: string,
  secret: SecretField,
  replacement: string,
  found?: (hit: FieldHit) => void,
): string {
  const hits = findSecretFields(text, secret);
  if (hits === undefined || hits.length === 0) return text;
  const quoted = JSON.stringify(replacement);
  const parts: string[] = [];
  let at = 0;
  for (const hit of hits) {
    found?.(hit);
    parts.push(text.slice(at, hit.start), quoted);
    at = hit.end;
  }
  parts.push(text.slice(at));
  return parts.join('');
}
