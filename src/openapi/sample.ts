import { isObject, resolvePointer, type Json, type JsonObject } from '../description/json-pointer.js';
import type { PatternString } from './pattern.js';

/** What openapi-sampler exports (its own types are not published for its entry point). */
export type Sampler = (schema: JsonObject, options: Record<string, unknown>, doc?: JsonObject) => unknown;

/** Marks an expanded schema where one of several `oneOf` alternatives was taken (see mayBreakSchema). */
const CHOICE = 'x-mockapi-choice';

/** Marks where a schema refers back to itself; replaced by something finite before sampling. */
const CIRCULAR: JsonObject = Object.freeze({ 'x-mockapi-circular': true }) as JsonObject;

/**
 * How many schema nodes one generated answer may expand to. Beyond it, `$ref`s are cut as if they
 * looped: a description whose objects refer to each other along many paths gives a smaller body,
 * never an import that runs out of memory.
 */
export const EXPANSION_BUDGET = 2_000;

interface Expanded {
  schema: Json;
  /** Whether a `$ref` was cut inside (a loop, or the budget): then the result depends on the path taken. */
  cut: boolean;
  /** For a cut `$ref`: the target's own type, used where a required property needs some value. */
  standIn?: JsonObject;
}

/** Expands a schema for the sampler; `variant` n takes, at each `oneOf`/`anyOf`, the alternative n places after the usual one. */
export type Expander = (schema: Json, variant?: number) => Json;

export interface ExpanderOptions {
  /** Makes strings for `pattern`s (see pattern.ts); without it, the sampler's string stays. */
  patternString?: PatternString;
  /** Schema nodes per answer; EXPANSION_BUDGET by default. */
  budget?: number;
}

/** Whether a schema admits only `null`: `{type: 'null'}`, `{enum: [null]}`, `{const: null}`. */
function isNullOnly(schema: Json | undefined): boolean {
  if (!isObject(schema)) return false;
  if (
    schema.type === 'null' ||
    (Array.isArray(schema.type) && schema.type.length > 0 && schema.type.every((t) => t === 'null'))
  )
    return true;
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every((v) => v === null)) return true;
  return Object.hasOwn(schema, 'const') && schema.const === null;
}

/** The part of a schema that says what kind of value it is, without anything to expand. */
function shallow(target: Json): JsonObject {
  if (!isObject(target)) return { type: 'object' };
  const out: JsonObject = {};
  for (const key of [
    'type',
    'format',
    'enum',
    'const',
    'pattern',
    'minLength',
    'maxLength',
    'minimum',
    'maximum',
    'example',
    'default',
  ]) {
    if (Object.hasOwn(target, key)) out[key] = target[key] as Json;
  }
  if (out.type === undefined && out.enum === undefined && out.const === undefined) out.type = 'object';
  return out;
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

/**
 * Inlines the local `$ref`s of a schema so that the sampler sees a finite tree of what it samples.
 * Lazily: of a `oneOf`/`anyOf` only the alternative the sampler takes is expanded — the first
 * that is not `null` only (so `anyOf: [{type: 'null'}, X]` samples as X) and does not loop — and
 * 3.1 type lists put `null` last. A reference back to a schema being expanded is cut — an optional
 * property or an alternative that loops is left out, a looping array gets no items (`[]`), a
 * required looping property becomes a value of its target's type — so `Node { children: Node[] }`
 * samples as `{ children: [] }`. Expansions without a cut are cached per `$ref` with their size,
 * those with a cut for the rest of the answer, and every answer has a budget of schema nodes (see
 * EXPANSION_BUDGET).
 */
export function createExpander(doc: JsonObject, options: ExpanderOptions = {}): Expander {
  const budget = options.budget ?? EXPANSION_BUDGET;
  const cache = new Map<string, { schema: Json; size: number }>();
  // Expansions with a cut, for this answer only: reused wherever the same `$ref` comes again (a
  // finite tree, maybe cut more than needed there), so that k objects referring to each other cost
  // k expansions, not k!. Cleared per answer, so an answer never depends on the ones before.
  const answerCache = new Map<string, { schema: Json; size: number }>();
  const stack = new Set<string>();
  // Schemas being expanded, by identity: a `$ref` back to an inline schema (bundling makes those) loops too.
  const active = new Set<JsonObject>();
  let used = 0;
  let variant = 0;

  function expand(node: Json, depth: number): Expanded {
    if (!isObject(node)) return { schema: node, cut: false };
    if (typeof node.$ref === 'string') return expandRef(node.$ref);
    if (depth > 64) return { schema: {}, cut: false };
    used++;
    active.add(node);
    try {
      return expandObject(node, depth);
    } finally {
      active.delete(node);
    }
  }

  /**
   * The alternative of a `oneOf`/`anyOf` the sampler takes: the first not null-only that does not
   * loop; for `variant` n, the one n places further (another try when the first gave a value its
   * schema refuses, as where `oneOf` alternatives overlap).
   */
  function choose(alternatives: Json[], depth: number): Expanded | undefined {
    let cut = false;
    const plain = alternatives.filter((a) => !isNullOnly(derefLocal(a)));
    const shift = plain.length === 0 ? 0 : variant % plain.length;
    const ordered = [
      ...plain.slice(shift),
      ...plain.slice(0, shift),
      ...alternatives.filter((a) => isNullOnly(derefLocal(a))),
    ];
    for (const alternative of ordered) {
      const e = expand(alternative, depth + 1);
      cut ||= e.cut;
      if (e.schema !== CIRCULAR) return { schema: e.schema, cut };
    }
    return cut ? { schema: CIRCULAR, cut } : undefined;
  }

  function derefLocal(node: Json): Json | undefined {
    let current: Json | undefined = node;
    for (let i = 0; i < 16 && isObject(current) && typeof current.$ref === 'string'; i++)
      current = targetOf(current.$ref).target;
    return current;
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
              if (required.has(name) && key === 'properties') props[name] = e.standIn ?? { type: 'object' };
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
        case 'anyOf':
        case 'oneOf': {
          if (!Array.isArray(value)) break;
          const chosen = choose(value, depth);
          if (chosen === undefined) break;
          cut ||= chosen.cut;
          // openapi-sampler merges the alternative into its parent, where `{type: 'null'}` samples as `{}`.
          if (isNullOnly(chosen.schema)) out.const = null;
          else if (chosen.schema !== CIRCULAR) out[key] = [chosen.schema];
          // The value made from one `oneOf` alternative may match another too: mayBreakSchema asks for a check.
          if (key === 'oneOf' && value.filter((a) => !isNullOnly(derefLocal(a))).length > 1) out[CHOICE] = true;
          break;
        }
        case 'allOf':
        case 'prefixItems': {
          if (!Array.isArray(value)) break;
          const parts = value.map((sub) => expand(sub, depth + 1));
          cut ||= parts.some((p) => p.cut);
          const kept = parts.map((p) => p.schema).filter((s) => s !== CIRCULAR);
          if (kept.length > 0) out[key] = kept;
          break;
        }
        case 'type':
          // openapi-sampler samples the first type of a list: `null` last gives the useful one.
          out.type = Array.isArray(value)
            ? [...value.filter((t) => t !== 'null'), ...value.filter((t) => t === 'null')]
            : value;
          break;
        case 'maxItems':
        case 'minItems':
          if (out.maxItems === 0) break; // a cut array stays empty
          out[key] = value;
          break;
        default:
          out[key] = value;
      }
    }
    if (options.patternString !== undefined && wantsPattern(node)) {
      const text = options.patternString(
        node.pattern,
        numberOr(node.minLength, 0),
        numberOr(node.maxLength, Number.POSITIVE_INFINITY),
      );
      if (text !== undefined) out.example = text;
    }
    return { schema: out, cut };
  }

  const targets = new Map<string, { target: Json | undefined; standIn: JsonObject }>();
  function targetOf(ref: string): { target: Json | undefined; standIn: JsonObject } {
    let found = targets.get(ref);
    if (found === undefined) {
      const target = resolvePointer(doc, ref);
      found = { target, standIn: shallow(target ?? {}) };
      targets.set(ref, found);
    }
    return found;
  }

  function expandRef(ref: string): Expanded {
    const { target, standIn } = targetOf(ref);
    if (stack.has(ref)) return { schema: CIRCULAR, cut: true, standIn };
    const cached = cache.get(ref) ?? answerCache.get(ref);
    if (cached !== undefined && used + cached.size <= budget) {
      used += cached.size;
      return { schema: cached.schema, cut: false };
    }
    if (target === undefined) return { schema: {}, cut: false };
    if (used >= budget || cached !== undefined) return { schema: CIRCULAR, cut: true, standIn };
    if (isObject(target) && active.has(target)) return { schema: CIRCULAR, cut: true, standIn };
    stack.add(ref);
    const before = used;
    const e = expand(target, 0);
    stack.delete(ref);
    if (e.schema !== CIRCULAR) (e.cut ? answerCache : cache).set(ref, { schema: e.schema, size: used - before });
    return e;
  }

  return (schema, which = 0) => {
    used = 0;
    // The caches hold expansions made with one choice of alternatives.
    if (which !== variant) cache.clear();
    variant = which;
    answerCache.clear();
    const e = expand(schema, 0);
    return e.schema === CIRCULAR ? (e.standIn ?? { type: 'object' }) : e.schema;
  };
}

const numberOr = (value: Json | undefined, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : fallback;

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
