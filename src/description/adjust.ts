/**
 * A description's schemas as JSON Schema reads them, for ajv. OpenAPI 3.0 writes a few things its
 * own way, and real 3.1 descriptions keep those habits (OpenAI's, Discord's): both are read the 3.0
 * way, since in a 3.1 file they mean nothing else.
 *
 * - `nullable: true` admits `null`: a `type` gains `null`, an `enum` gains `null`; beside `anyOf` or
 *   `oneOf` a `{type: 'null'}` alternative is added at the end; beside `allOf`, `$ref` or `not`
 *   (GitHub's and Stripe's `{nullable: true, allOf: [{$ref: Address}]}`) the schema is wrapped:
 *   `null`, else the schema as written (see {@link NULLABLE_WRAPPER}).
 * - A boolean `exclusiveMinimum`/`exclusiveMaximum` turns its `minimum`/`maximum` exclusive.
 * - `enum: []` admits nothing (ajv refuses an empty `enum`).
 * - readOnly properties are not required in a request, writeOnly ones not in an answer.
 *
 * The pointers into the description stay valid: a wrapped schema's keywords move one level down,
 * and {@link unwrapStep} tells pointer resolution (pointers.ts) to step through the wrapper.
 */

type Node = Record<string, unknown>;

/** Which way a message goes: readOnly properties are not required in a request, writeOnly ones not in an answer. */
export type Direction = 'request' | 'response';

/** Marks a wrapper `{ if: {type: 'null'}, else: <the schema as written> }` made for `nullable: true`. */
export const NULLABLE_WRAPPER = 'x-mockapi-nullable';

/** The keywords a wrapper has of its own; any other pointer token goes to the schema inside it. */
const WRAPPER_KEYS = new Set([NULLABLE_WRAPPER, 'if', 'else', 'readOnly', 'writeOnly']);

/** The schema inside a nullable wrapper that a pointer token `token` goes into; undefined when `node` is no wrapper, or the token is the wrapper's own. */
export function unwrapStep(node: unknown, token: string): { node: unknown; token: string } | undefined {
  if (node === null || typeof node !== 'object' || (node as Node)[NULLABLE_WRAPPER] !== true || WRAPPER_KEYS.has(token))
    return undefined;
  return { node: (node as Node).else, token: 'else' };
}

const COMPOSED = ['allOf', '$ref', 'not'];

/** `out` (a copied schema) with `nullable` read as OpenAPI 3.0 does. */
function readNullable(out: Node): Node {
  const nullable = out.nullable;
  delete out.nullable;
  if (nullable !== true) return out;
  if (COMPOSED.some((key) => out[key] !== undefined)) {
    const wrapper: Node = { [NULLABLE_WRAPPER]: true, if: { type: 'null' }, else: out };
    // The required-property rule reads these on the property's own schema.
    for (const key of ['readOnly', 'writeOnly']) if (out[key] !== undefined) wrapper[key] = out[key];
    return wrapper;
  }
  if (typeof out.type === 'string') out.type = [out.type, 'null'];
  else if (Array.isArray(out.type) && !out.type.includes('null')) out.type = [...out.type, 'null'];
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  for (const key of ['anyOf', 'oneOf'])
    if (Array.isArray(out[key])) out[key] = [...(out[key] as unknown[]), { type: 'null' }];
  return out;
}

/** `out` with a boolean `exclusiveMinimum`/`exclusiveMaximum` read as OpenAPI 3.0 does. */
function readExclusiveBounds(out: Node): void {
  for (const [bound, limit] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof out[bound] !== 'boolean') continue;
    if (out[bound] === true && typeof out[limit] === 'number') {
      out[bound] = out[limit];
      delete out[limit];
    } else delete out[bound];
  }
}

/** A copy of `value` (a description, or a part of one) with its schemas read as JSON Schema, for `direction`. */
export function adjusted(value: unknown, direction: Direction): unknown {
  if (Array.isArray(value)) return value.map((item) => adjusted(item, direction));
  if (value === null || typeof value !== 'object') return value;
  let out: Node = {};
  for (const [key, child] of Object.entries(value as Node))
    out[key] = key === 'example' || key === 'examples' ? child : adjusted(child, direction);
  readExclusiveBounds(out);
  if (Array.isArray(out.enum) && out.enum.length === 0 && out.nullable !== true) {
    // Nothing matches an empty enum: `false` beside what the schema says (appended, so pointers stay).
    delete out.enum;
    out.allOf = [...(Array.isArray(out.allOf) ? out.allOf : []), false];
  }
  // readOnly properties are sent by the server, never by a client: not required in a request;
  // writeOnly ones the other way round.
  if (Array.isArray(out.required) && out.properties !== null && typeof out.properties === 'object') {
    const properties = out.properties as Record<string, Node | undefined>;
    const skip = direction === 'request' ? 'readOnly' : 'writeOnly';
    out.required = (out.required as unknown[]).filter(
      (name) => !(typeof name === 'string' && properties[name]?.[skip] === true),
    );
  }
  if (typeof out.nullable === 'boolean') out = readNullable(out);
  return out;
}
