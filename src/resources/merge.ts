/**
 * How a request's fields change an object: nested mappings merge key by key, lists and values
 * replace; null removes a key inside a mapping (`metadata[key]=`), and at the top sets the field to
 * null — or to an empty mapping for a field that holds one (`metadata=` clears every key, as
 * Stripe does). Never writes through a prototype: keys come from bodies already checked.
 */

type Obj = Record<string, unknown>;

export const isPlainObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function mergeInto(target: Obj, patch: Obj, top: boolean): Obj {
  return mergeOnto({ ...target }, patch, top);
}

/** `patch` merged into `out` (a copy made for it), in place. */
function mergeOnto(out: Obj, patch: Obj, top: boolean): Obj {
  // (Object.keys, not Object.entries: no pair array per field on a create's path)
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    const before = out[key];
    if (value === null) {
      if (!top) delete out[key];
      else out[key] = isPlainObject(before) ? {} : null;
    } else if (isPlainObject(value) && isPlainObject(before)) out[key] = mergeInto(before, value, false);
    else out[key] = isPlainObject(value) ? stripNulls(value) : value;
  }
  return out;
}

/** A mapping that replaces nothing keeps no null members (they mean "remove"). */
function stripNulls(value: Obj): Obj {
  const out: Obj = {};
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (item !== null) out[key] = isPlainObject(item) ? stripNulls(item) : item;
  }
  return out;
}

/** `object` with `patch` merged in (a new object; neither is changed). */
export function mergeFields(object: Obj, patch: Obj): Obj {
  return mergeInto(object, patch, true);
}

/**
 * `{ id, ...mergeFields(object, patch) }` made as one object, not a merge and then its copy with
 * the id in front (a create's object). Neither `object` nor `patch` may have an `id` of its own.
 */
export function mergeFieldsAfterId(id: string | number, object: Obj, patch: Obj): Obj {
  return mergeOnto({ id, ...object }, patch, true);
}

/** `patch` merged into `copy` in place, as {@link mergeFields} merges it into its copy of an object: `copy` must be a copy made for it. */
export function mergeFieldsInto(copy: Obj, patch: Obj): Obj {
  return mergeOnto(copy, patch, true);
}

/** The dotted paths of the fields `patch` names (`metadata.order`), for the object's history. */
export function changedFields(patch: Obj, prefix = ''): string[] {
  return Object.entries(patch).flatMap(([key, value]) =>
    isPlainObject(value) && Object.keys(value).length > 0
      ? changedFields(value, `${prefix}${key}.`)
      : [`${prefix}${key}`],
  );
}

/** Type hints `over` laid on `base`, mapping by mapping (an OpenAPI schema's type where it gives one, else the default's). */
export function layHints(base: unknown, over: unknown): unknown {
  if (over === undefined || over === null) return base;
  if (!isPlainObject(base) || !isPlainObject(over)) return over;
  const out: Obj = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = layHints(out[key], value);
  return out;
}
