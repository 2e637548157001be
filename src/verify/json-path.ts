/**
 * JSON paths as `mockapi verify` writes them in its report and reads them in `verify.ignore`:
 * `$` the body, `.name` (or `["odd name"]`) a field, `[]` the items of an array, `.*` the fields of
 * a map whose keys are ids (folded into one: their names are data, not shape).
 */

/** The items of an array. */
export const ITEMS: unique symbol = Symbol('items');
/** Any field of a map whose keys look like ids, dates or hashes. */
export const ANY_KEY: unique symbol = Symbol('any key');

/** One step of a path: a field name, the items of an array, or any field of an id-keyed map. */
export type Segment = string | typeof ITEMS | typeof ANY_KEY;

const PLAIN = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** One segment as written after its parent: a path is `$` and its segments (`$.user.name`, `$.items[].id`, `$.users.*.email`). */
export function formatSegment(segment: Segment): string {
  if (segment === ITEMS) return '[]';
  if (segment === ANY_KEY) return '.*';
  return PLAIN.test(segment) ? `.${segment}` : `[${JSON.stringify(segment)}]`;
}
