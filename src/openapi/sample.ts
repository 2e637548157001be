/**
 * Sample bodies for response schemas: openapi-sampler's values for a schema the expander
 * (schema-expand.ts) made finite, the same on every run, and whether such a value may break its
 * schema and so needs checking.
 */
import { isObject, type Json, type JsonObject } from '../description/json-pointer.js';
import type { Expander } from './schema-expand.js';
import { CHOICE } from './schema-expand-node.js';

/** What openapi-sampler exports (its own types are not published for its entry point). */
export type Sampler = (schema: JsonObject, options: Record<string, unknown>, doc?: JsonObject) => unknown;

/**
 * A body for a response schema, the same on every run: openapi-sampler's first-choice values
 * (formats such as uuid, date-time, email and uri get fixed realistic values; `enum` its first
 * value; `allOf` merged; the first `oneOf`/`anyOf` alternative that is not `null`; 3.1 `type`
 * lists their first non-null type; a `pattern` a string made from it), writeOnly properties left
 * out as a response never carries them.
 */
export function sampleBody(sampler: Sampler, expandSchema: Expander, schema: Json, variant = 0): Json {
  return sampleExpanded(sampler, expandSchema(schema, variant));
}

/** {@link sampleBody} of a schema already expanded. */
export function sampleExpanded(sampler: Sampler, expanded: Json): Json {
  if (!isObject(expanded)) return null;
  const value = sampler(expanded, { skipWriteOnly: true, skipReadOnly: false, quiet: true });
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as Json);
}

/**
 * Whether a value sampled from an expanded schema may break that schema: where one of several
 * `oneOf` alternatives was taken (the value may match another too) or it has a `not`. Elsewhere the sampler's values follow
 * the schema, and checking them would cost a compile per schema.
 */
const VALUE_KEYS = new Set(['example', 'examples', 'default', 'enum', 'const']);

export function mayBreakSchema(expanded: Json): boolean {
  const stack: Json[] = [expanded];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const node = stack.pop() as Json;
    if (node === null || typeof node !== 'object' || seen.has(node)) continue;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
      continue;
    }
    if (node[CHOICE] === true || node.not !== undefined) return true;
    // Extensions (Stripe's `x-expansionResources`), examples and values hold no schema the sampler used.
    for (const [key, value] of Object.entries(node))
      if (!key.startsWith('x-') && !VALUE_KEYS.has(key)) stack.push(value);
  }
  return false;
}
