import { isObject, type Json } from './json-pointer.js';
import { unwrapStep } from './adjust.js';

/**
 * Canonical JSON pointers into a bundled description. A bundler writes a `$ref` to where it first
 * met a value, which may be a path through another `$ref` (`#/paths/~1a/get/…/owner/oneOf/1` where
 * `owner` is itself a `$ref`): ajv resolves pointers literally, so such a path is turned into the
 * one that reaches the value without crossing a `$ref`.
 */

const decode = (token: string): string => {
  let text = token;
  try {
    text = decodeURIComponent(token);
  } catch {
    // not percent-encoded
  }
  return text.replace(/~1/g, '/').replace(/~0/g, '~');
};

/** `a/b~c` as a pointer token. */
export const encodeToken = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The tokens of `#/a/b` (or `/a/b`). */
function tokensOf(pointer: string): string[] {
  const text = pointer.startsWith('#') ? pointer.slice(1) : pointer;
  return text === '' ? [] : text.slice(1).split('/').map(decode);
}

/**
 * Where `pointer` leads in `doc`, following every `$ref` met on the way (the last value's own
 * `$ref` too, when `follow`): the value and its canonical pointer; undefined when it leads nowhere.
 */
export function locate(
  doc: Json,
  pointer: string,
  follow = true,
  depth = 0,
): { node: Json; pointer: string } | undefined {
  if (depth > 64) return undefined;
  let node: Json | undefined = doc;
  let at = '';
  const tokens = tokensOf(pointer);
  for (let i = 0; i <= tokens.length; i++) {
    if (isObject(node) && typeof node.$ref === 'string' && node.$ref.startsWith('#') && (i < tokens.length || follow)) {
      const target = locate(doc, node.$ref, true, depth + 1);
      if (target === undefined) return undefined;
      node = target.node;
      at = target.pointer;
    }
    if (i === tokens.length) break;
    const token = tokens[i] as string;
    // A schema wrapped for `nullable` (adjust.ts): the description's pointers go into what it wraps.
    const inner = unwrapStep(node, token);
    if (inner !== undefined) {
      node = inner.node as Json;
      at += `/${inner.token}`;
      i--;
      continue;
    }
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isObject(node) && Object.hasOwn(node, token)) node = node[token];
    else return undefined;
    at += `/${encodeToken(token)}`;
  }
  return node === undefined ? undefined : { node, pointer: at };
}

/** Rewrites, in place, every local `$ref` of `doc` that crosses another `$ref` to its canonical pointer. */
export function canonicalRefs(doc: Json): void {
  const memo = new Map<string, string>();
  const stack: Json[] = [doc];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
      continue;
    }
    if (!isObject(node)) continue;
    const ref = node.$ref;
    if (typeof ref === 'string' && ref.startsWith('#/')) {
      let canonical = memo.get(ref);
      if (canonical === undefined) {
        canonical = `#${locate(doc, ref, false)?.pointer ?? ref.slice(1)}`;
        memo.set(ref, canonical);
      }
      if (canonical !== ref) node.$ref = canonical;
    }
    for (const [key, child] of Object.entries(node)) if (key !== 'example' && key !== 'examples') stack.push(child);
  }
}
