/**
 * What a request's body or query may hold: the keys never used (they could reach a prototype),
 * the deepest nesting and the highest list position a form key may name, the refusals of one that
 * breaks them ({@link BadInput}, {@link TooDeep}), and {@link checkKeys} of a JSON value.
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
