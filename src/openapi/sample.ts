import { isObject, resolvePointer, type Json, type JsonObject } from './json-pointer.js';

/** What openapi-sampler exports (its own types are not published for its entry point). */
export type Sampler = (schema: JsonObject, options: Record<string, unknown>, doc?: JsonObject) => unknown;

/** Marks where a schema refers back to itself; replaced by something finite before sampling. */
const CIRCULAR: JsonObject = Object.freeze({ 'x-mockapi-circular': true }) as JsonObject;

interface Expanded {
  schema: Json;
  /** Whether a circular reference was cut inside: then the result depends on the path taken. */
  cut: boolean;
}

/**
 * Inlines the local `$ref`s of a schema so that the sampler sees a finite tree: a reference back
 * to a schema being expanded is cut — an optional property or an `anyOf`/`oneOf` alternative that
 * loops is left out, a looping array gets no items (`[]`), a required looping property becomes
 * `{}` — so `Node { children: Node[] }` samples as `{ children: [] }` instead of openapi-sampler's
 * `{ children: [{}] }`, which breaks `required`. Expansions without a cut are cached per `$ref`.
 */
export function createExpander(doc: JsonObject): (schema: Json) => Json {
  const cache = new Map<string, Json>();
  const stack = new Set<string>();
  // Schemas being expanded, by identity: a `$ref` back to an inline schema (bundling makes those) loops too.
  const active = new Set<JsonObject>();

  function expand(node: Json, depth: number): Expanded {
    if (!isObject(node)) return { schema: node, cut: false };
    if (typeof node.$ref === 'string') return expandRef(node.$ref);
    if (depth > 64) return { schema: {}, cut: false };
    active.add(node);
    try {
      return expandObject(node, depth);
    } finally {
      active.delete(node);
    }
  }

  function expandObject(node: JsonObject, depth: number): Expanded {
    let cut = false;
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(node)) {
      switch (key) {
        case 'properties':
        case 'patternProperties': {
          if (!isObject(value)) break;
          const required = new Set(Array.isArray(node.required) ? node.required : []);
          const props: JsonObject = {};
          for (const [name, sub] of Object.entries(value)) {
            const e = expand(sub, depth + 1);
            cut ||= e.cut;
            if (e.schema === CIRCULAR) {
              if (required.has(name) && key === 'properties') props[name] = { type: 'object' };
            } else props[name] = e.schema;
          }
          out[key] = props;
          break;
        }
        case 'items':
        case 'additionalProperties':
        case 'not':
        case 'contains': {
          const e = expand(value, depth + 1);
          cut ||= e.cut;
          if (e.schema !== CIRCULAR) out[key] = e.schema;
          else if (key === 'items') {
            out.items = {};
            out.maxItems = 0;
            out.minItems = 0;
          }
          break;
        }
        case 'allOf':
        case 'anyOf':
        case 'oneOf':
        case 'prefixItems': {
          if (!Array.isArray(value)) break;
          const parts = value.map((sub) => expand(sub, depth + 1));
          cut ||= parts.some((p) => p.cut);
          const kept = parts.map((p) => p.schema).filter((s) => s !== CIRCULAR);
          if (kept.length > 0) out[key] = kept;
          break;
        }
        case 'maxItems':
        case 'minItems':
          if (out.maxItems === 0) break; // a cut array stays empty
          out[key] = value;
          break;
        default:
          out[key] = value;
      }
    }
    return { schema: out, cut };
  }

  function expandRef(ref: string): Expanded {
    if (stack.has(ref)) return { schema: CIRCULAR, cut: true };
    const cached = cache.get(ref);
    if (cached !== undefined) return { schema: cached, cut: false };
    const target = resolvePointer(doc, ref);
    if (target === undefined) return { schema: {}, cut: false };
    if (isObject(target) && active.has(target)) return { schema: CIRCULAR, cut: true };
    stack.add(ref);
    const e = expand(target, 0);
    stack.delete(ref);
    if (!e.cut) cache.set(ref, e.schema);
    return e;
  }

  return (schema) => {
    const e = expand(schema, 0);
    return e.schema === CIRCULAR ? { type: 'object' } : e.schema;
  };
}

/**
 * A body for a response schema, the same on every run: openapi-sampler's first-choice values
 * (formats such as uuid, date-time, email and uri get fixed realistic values; `enum` its first
 * value; `allOf` merged; the first `oneOf`/`anyOf` alternative; 3.1 `type` lists their first
 * non-null type), writeOnly properties left out as a response never carries them.
 */
export function sampleBody(sampler: Sampler, expandSchema: (schema: Json) => Json, schema: Json): Json {
  const expanded = expandSchema(schema);
  if (!isObject(expanded)) return null;
  const value = sampler(expanded, { skipWriteOnly: true, skipReadOnly: false, quiet: true });
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as Json);
}
