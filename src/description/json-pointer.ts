/** A JSON value as read from a description. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A JSON object. */
export type JsonObject = { [key: string]: Json };

/** Whether `value` is a JSON object (not an array, not null). */
export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function unescapeToken(token: string): string {
  let decoded = token;
  try {
    decoded = decodeURIComponent(token); // a pointer in a URI fragment may be percent-encoded
  } catch {
    // not percent-encoded after all
  }
  return decoded.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** The value a local `#/a/b` reference points to in `doc`, or undefined when it points nowhere. */
export function resolvePointer(doc: Json, ref: string): Json | undefined {
  return walk(doc, ref)?.node;
}

const escapeToken = (token: string): string => token.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * A local reference rewritten so that its path crosses no `$ref`: bundlers point a reference
 * through another one (`#/paths/~1a/get/…/owner/oneOf/1`, where `owner` is itself a `$ref`), which
 * a JSON pointer alone does not follow. Undefined when it points nowhere.
 */
export function canonicalRef(doc: Json, ref: string): string | undefined {
  const found = walk(doc, ref);
  return found === undefined ? undefined : `#${found.path.map((t) => `/${escapeToken(t)}`).join('')}`;
}

/** Walks a reference, following a `$ref` met on the way when the next token is not its own key. */
function walk(doc: Json, ref: string, hops = 0): { node: Json; path: string[] } | undefined {
  if (!ref.startsWith('#') || hops > 32) return undefined;
  const pointer = ref.slice(1);
  if (pointer === '') return { node: doc, path: [] };
  if (!pointer.startsWith('/')) return undefined;
  let node: Json | undefined = doc;
  let path: string[] = [];
  for (const token of pointer.slice(1).split('/').map(unescapeToken)) {
    if (isObject(node) && typeof node.$ref === 'string' && !Object.hasOwn(node, token)) {
      const through = walk(doc, node.$ref, hops + 1);
      if (through === undefined) return undefined;
      ({ node, path } = through);
      path = [...path];
    }
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isObject(node)) node = Object.hasOwn(node, token) ? node[token] : undefined;
    else return undefined;
    if (node === undefined) return undefined;
    path.push(token);
  }
  return { node, path };
}

/**
 * Follows `$ref`s (after bundling every reference is local) until a value that is not a reference;
 * undefined for a dangling or circular chain.
 */
export function deref(doc: Json, value: Json | undefined): Json | undefined {
  const seen = new Set<string>();
  let current = value;
  while (isObject(current) && typeof current.$ref === 'string') {
    if (seen.has(current.$ref)) return undefined;
    seen.add(current.$ref);
    current = resolvePointer(doc, current.$ref);
  }
  return current;
}
