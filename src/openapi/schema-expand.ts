/**
 * The schema expander: a response schema with its local `$ref`s inlined into the finite tree
 * openapi-sampler samples — lazily, within a budget of schema nodes per answer, loops cut, and
 * expansions cached per `$ref`. Each schema object is expanded by schema-expand-node.ts.
 */
import { isObject, resolvePointer, type Json, type JsonObject } from '../description/json-pointer.js';
import type { PatternString } from './pattern.js';
import { CIRCULAR, expandObject, isNullOnly, type Expanded, type ExpandSteps } from './schema-expand-node.js';

/**
 * How many schema nodes one generated answer may expand to. Beyond it, `$ref`s are cut as if they
 * looped: a description whose objects refer to each other along many paths gives a smaller body,
 * never an import that runs out of memory.
 */
export const EXPANSION_BUDGET = 2_000;

/** Expands a schema for the sampler; `variant` n takes, at each `oneOf`/`anyOf`, the alternative n places after the usual one. */
export type Expander = (schema: Json, variant?: number) => Json;

export interface ExpanderOptions {
  /** Makes strings for `pattern`s (see pattern.ts); without it, the sampler's string stays. */
  patternString?: PatternString;
  /** Schema nodes per answer; EXPANSION_BUDGET by default. */
  budget?: number;
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
  const steps: ExpandSteps = {
    expand,
    choose,
    isNullOnlyRef: (node) => isNullOnly(derefLocal(node)),
    ...(options.patternString === undefined ? {} : { patternString: options.patternString }),
  };

  function expand(node: Json, depth: number): Expanded {
    if (!isObject(node)) return { schema: node, cut: false };
    if (typeof node.$ref === 'string') return expandRef(node.$ref);
    if (depth > 64) return { schema: {}, cut: false };
    used++;
    active.add(node);
    try {
      return expandObject(node, depth, steps);
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
