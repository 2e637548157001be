/**
 * Expanding one schema object for the sampler, keyword by keyword: its properties, items and
 * alternatives expanded through the expander it is part of (schema-expand.ts), what loops cut
 * (an optional property left out, an array left empty, a required property given a stand-in),
 * 3.1 type lists with `null` last, and a string made from a `pattern` where the sampler's own
 * value would not match it. Also the marks an expanded schema carries ({@link CIRCULAR},
 * {@link CHOICE}).
 */
import { isObject, type Json, type JsonObject } from '../description/json-pointer.js';
import type { PatternString } from './pattern.js';

/** Marks an expanded schema where one of several `oneOf` alternatives was taken (see mayBreakSchema). */
export const CHOICE = 'x-mockapi-choice';

/** Marks where a schema refers back to itself; replaced by something finite before sampling. */
export const CIRCULAR: JsonObject = Object.freeze({ 'x-mockapi-circular': true }) as JsonObject;

/** One schema expanded. */
export interface Expanded {
  schema: Json;
  /** Whether a `$ref` was cut inside (a loop, or the budget): then the result depends on the path taken. */
  cut: boolean;
  /** For a cut `$ref`: the target's own type, used where a required property needs some value. */
  standIn?: JsonObject;
}

/** Whether a schema admits only `null`: `{type: 'null'}`, `{enum: [null]}`, `{const: null}`. */
export function isNullOnly(schema: Json | undefined): boolean {
  if (!isObject(schema)) return false;
  if (
    schema.type === 'null' ||
    (Array.isArray(schema.type) && schema.type.length > 0 && schema.type.every((t) => t === 'null'))
  )
    return true;
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every((v) => v === null)) return true;
  return Object.hasOwn(schema, 'const') && schema.const === null;
}

/** What expanding one schema object needs of the expander it is part of. */
export interface ExpandSteps {
  /** Expands a sub-schema (a `$ref` inlined), counting it against the answer's budget. */
  expand(node: Json, depth: number): Expanded;
  /** The alternative of a `oneOf`/`anyOf` the sampler takes. */
  choose(alternatives: Json[], depth: number): Expanded | undefined;
  /** Whether a schema, its `$ref`s followed, admits only `null`. */
  isNullOnlyRef(node: Json): boolean;
  /** Makes strings for `pattern`s; without it, the sampler's string stays. */
  patternString?: PatternString;
}

/** `node` expanded, keyword by keyword in its own order. */
export function expandObject(node: JsonObject, depth: number, steps: ExpandSteps): Expanded {
  let cut = false;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) if (expandKeyword(out, node, key, value, depth, steps)) cut = true;
  if (steps.patternString !== undefined && wantsPattern(node)) {
    const text = steps.patternString(
      node.pattern,
      numberOr(node.minLength, 0),
      numberOr(node.maxLength, Number.POSITIVE_INFINITY),
    );
    if (text !== undefined) out.example = text;
  }
  return { schema: out, cut };
}

/** One keyword of `node` expanded into `out`; whether a `$ref` was cut inside it. */
function expandKeyword(
  out: JsonObject,
  node: JsonObject,
  key: string,
  value: Json,
  depth: number,
  steps: ExpandSteps,
): boolean {
  switch (key) {
    case 'properties':
    case 'patternProperties':
      return isObject(value) ? expandProperties(out, node, key, value, depth, steps) : false;
    case 'items':
    case 'additionalProperties':
    case 'not':
    case 'contains':
      return expandSub(out, key, value, depth, steps);
    case 'anyOf':
    case 'oneOf':
      return Array.isArray(value) ? expandChoice(out, key, value, depth, steps) : false;
    case 'allOf':
    case 'prefixItems': {
      if (!Array.isArray(value)) return false;
      const parts = value.map((sub) => steps.expand(sub, depth + 1));
      const kept = parts.map((p) => p.schema).filter((s) => s !== CIRCULAR);
      if (kept.length > 0) out[key] = kept;
      return parts.some((p) => p.cut);
    }
    case 'type':
      // openapi-sampler samples the first type of a list: `null` last gives the useful one.
      out.type = Array.isArray(value)
        ? [...value.filter((t) => t !== 'null'), ...value.filter((t) => t === 'null')]
        : value;
      return false;
    case 'maxItems':
    case 'minItems':
      if (out.maxItems !== 0) out[key] = value; // a cut array stays empty
      return false;
    default:
      out[key] = value;
      return false;
  }
}

/** `properties`/`patternProperties`: a property that loops is left out, or given a stand-in when required. */
function expandProperties(
  out: JsonObject,
  node: JsonObject,
  key: string,
  value: JsonObject,
  depth: number,
  steps: ExpandSteps,
): boolean {
  let cut = false;
  const required = new Set(Array.isArray(node.required) ? node.required : []);
  const props: JsonObject = {};
  for (const [name, sub] of Object.entries(value)) {
    const e = steps.expand(sub, depth + 1);
    cut ||= e.cut;
    if (e.schema === CIRCULAR) {
      if (required.has(name) && key === 'properties') props[name] = e.standIn ?? { type: 'object' };
    } else props[name] = e.schema;
  }
  out[key] = props;
  return cut;
}

/** `items`, `additionalProperties`, `not`, `contains`: left out when they loop, but items, which make the array empty. */
function expandSub(out: JsonObject, key: string, value: Json, depth: number, steps: ExpandSteps): boolean {
  const e = steps.expand(value, depth + 1);
  if (e.schema !== CIRCULAR) out[key] = e.schema;
  else if (key === 'items') {
    out.items = {};
    out.maxItems = 0;
    out.minItems = 0;
  }
  return e.cut;
}

/** `oneOf`/`anyOf`: the one alternative the sampler takes. */
function expandChoice(out: JsonObject, key: string, value: Json[], depth: number, steps: ExpandSteps): boolean {
  const chosen = steps.choose(value, depth);
  if (chosen === undefined) return false;
  // openapi-sampler merges the alternative into its parent, where `{type: 'null'}` samples as `{}`.
  if (isNullOnly(chosen.schema)) out.const = null;
  else if (chosen.schema !== CIRCULAR) out[key] = [chosen.schema];
  // The value made from one `oneOf` alternative may match another too: mayBreakSchema asks for a check.
  if (key === 'oneOf' && value.filter((a) => !steps.isNullOnlyRef(a)).length > 1) out[CHOICE] = true;
  return chosen.cut;
}

/** The string formats openapi-sampler makes a value of (its `stringFormats`); any other format gives `"string"`. */
const SAMPLER_FORMATS = new Set([
  'email',
  'idn-email',
  'password',
  'date-time',
  'date',
  'time',
  'ipv4',
  'ipv6',
  'hostname',
  'idn-hostname',
  'iri',
  'iri-reference',
  'uri',
  'uri-reference',
  'uri-template',
  'uuid',
  'json-pointer',
  'relative-json-pointer',
  'regex',
]);

/**
 * Whether a generated string for the node's `pattern` should stand in for the sampler's: a format
 * the sampler makes values of wins (its value is realistic), any other (Discord's `snowflake`) does
 * not stop the pattern.
 */
function wantsPattern(node: JsonObject): node is JsonObject & { pattern: string } {
  if (typeof node.pattern !== 'string' || (typeof node.format === 'string' && SAMPLER_FORMATS.has(node.format)))
    return false;
  if (node.type !== undefined && node.type !== 'string' && !(Array.isArray(node.type) && node.type[0] === 'string'))
    return false;
  return !['example', 'examples', 'const', 'enum', 'default'].some((k) => Object.hasOwn(node, k));
}

const numberOr = (value: Json | undefined, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : fallback;
