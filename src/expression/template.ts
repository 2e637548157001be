import type { AnswerIssue, Compiled, IssuePath, RequestContext } from './context.js';
import { compileString, hasTemplateSyntax } from './string-template.js';
import type { ExpressionOptions } from './compile.js';
import { numberOf } from './values.js';

/** A body compiled once per config load. */
export interface CompiledTemplate {
  /**
   * True when the body has no expressions, escapes or `$repeat`: `evaluate` then returns the same
   * value (the config's own, not a copy — do not change it) for every request, and the caller
   * can serialize it once and keep the bytes.
   */
  readonly static: boolean;
  /** Some string calls `fake.*`: `loadFaker()` must have resolved before `evaluate` runs. */
  readonly usesFaker: boolean;
  /** Some string draws from the random source. */
  readonly usesRandom: boolean;
  /** The body for one request. Nothing is thrown: what cannot be read reads as nothing. */
  readonly evaluate: (ctx: RequestContext) => unknown;
  /**
   * For a body that is a mapping or a list: its JSON text for one request, the same text as
   * `JSON.stringify(evaluate(ctx))` but made from the static parts' text (serialized once) and
   * the dynamic values alone, so a request builds no body object. Undefined for other bodies.
   */
  readonly json?: (ctx: RequestContext) => string;
}

/** Options of {@link compileTemplate}: those of expressions, and where the body sits in the config. */
export interface TemplateOptions extends Omit<ExpressionOptions, 'allowIndex'> {
  /** Field path of the body, put in front of every issue's path. Default `[]`. */
  readonly path?: IssuePath;
}

/** Most items one `$repeat` makes; a larger count (from the request, say) is cut to this. */
export const MAX_REPEAT = 10_000;

/** Most items all the `$repeat` lists of one answer make together (nested counts multiply). */
export const MAX_ANSWER_ITEMS = 100_000;

/** Longest text a body made for one request may be, in characters (16 Mi). */
export const MAX_ANSWER_TEXT = 16 * 1024 * 1024;

/**
 * Thrown while a body is made, as soon as it would pass {@link MAX_ANSWER_ITEMS} or
 * {@link MAX_ANSWER_TEXT}: the request that asked for it gets a 500 saying so (leaf.ts), and the
 * rest is never built. Its message is meant for the client.
 */
export class AnswerTooLarge extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AnswerTooLarge';
  }
}

/** What one body made so far: items of its `$repeat` lists. */
interface Budget {
  items: number;
}

function spendItems(budget: Budget, count: number): void {
  budget.items += count;
  if (budget.items > MAX_ANSWER_ITEMS)
    throw new AnswerTooLarge(
      `The answer is too large: its $repeat lists would hold more than ${MAX_ANSWER_ITEMS} items in all`,
    );
}

/** Checks the text made so far of a list or mapping (each checks its own, so none grows far past the limit). */
function checkText(text: string): void {
  if (text.length > MAX_ANSWER_TEXT)
    throw new AnswerTooLarge(`The answer is too large: it would be longer than ${MAX_ANSWER_TEXT / 1024 / 1024} MiB`);
}

/** A character JSON.stringify writes as an escape: `"`, `\\`, a control character, a surrogate (lone ones are escaped). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * JSON.stringify of one value of an expression, without its setup for the usual text (a fake name,
 * a query value) that has nothing to escape: quoted as it is, the same text JSON.stringify gives.
 */
export function valueJson(value: unknown): string | undefined {
  if (typeof value === 'string' && !NEEDS_ESCAPE.test(value)) return `"${value}"`;
  return JSON.stringify(value) as string | undefined;
}

/** JSON text of a part for one request; undefined where JSON.stringify gives none (an undefined value). */
type Json = (ctx: RequestContext, index: number | undefined, budget: Budget) => string | undefined;
type Part =
  | { readonly constant: true; readonly value: unknown }
  | {
      readonly constant: false;
      readonly evaluate: (ctx: RequestContext, index: number | undefined, budget: Budget) => unknown;
      readonly json: Json;
    };

/** A part's JSON text maker: a constant's text is made once. */
function jsonOf(part: Part): Json {
  if (!part.constant) return part.json;
  const text = JSON.stringify(part.value);
  return () => text;
}

/** `[…]` of item texts; an item without a text is `null`, as JSON.stringify writes it. */
function jsonList(items: readonly Json[], ctx: RequestContext, index: number | undefined, budget: Budget): string {
  let out = '[';
  for (let i = 0; i < items.length; i++)
    out += `${i === 0 ? '' : ','}${(items[i] as Json)(ctx, index, budget) ?? 'null'}`;
  checkText(out);
  return `${out}]`;
}

interface Walk {
  readonly options: TemplateOptions;
  readonly issues: AnswerIssue[];
  usesFaker: boolean;
  usesRandom: boolean;
}

/**
 * Whether a body is sent exactly as written: no string holds `${` (an expression or a `$${`
 * escape) and no mapping has `$repeat` or `$item`. Cheap; needs no compiling.
 */
export function isStatic(value: unknown): boolean {
  if (typeof value === 'string') return !hasTemplateSyntax(value);
  if (Array.isArray(value)) return value.every(isStatic);
  if (value === null || typeof value !== 'object') return true;
  if (Object.hasOwn(value, '$repeat') || Object.hasOwn(value, '$item')) return false;
  return Object.values(value).every(isStatic);
}

/**
 * Compiles a body (any JSON/YAML value): strings with `${…}` become expressions, and
 * `{ $repeat: <count or expression>, $item: <body> }` anywhere becomes a list of `$item` made
 * `count` times with `index` (from 0) bound inside it. Mapping keys are never expressions.
 */
export function compileTemplate(body: unknown, options: TemplateOptions = {}): Compiled<CompiledTemplate> {
  const walk: Walk = { options, issues: [], usesFaker: false, usesRandom: false };
  const part = compileValue(body, options.path ?? [], false, walk);
  if (walk.issues.length > 0) return { ok: false, issues: walk.issues };
  const traits = { usesFaker: walk.usesFaker, usesRandom: walk.usesRandom };
  const structured = body !== null && typeof body === 'object';
  if (part.constant) {
    const { value } = part;
    const text = JSON.stringify(value);
    return {
      ok: true,
      value: { static: isStatic(body), ...traits, evaluate: () => value, ...(structured ? { json: () => text } : {}) },
    };
  }
  const { evaluate, json } = part;
  return {
    ok: true,
    value: {
      static: false,
      ...traits,
      evaluate: (ctx) => evaluate(ctx, undefined, { items: 0 }),
      ...(structured ? { json: (ctx: RequestContext) => json(ctx, undefined, { items: 0 }) ?? '' } : {}),
    },
  };
}

function compileValue(value: unknown, path: IssuePath, inItem: boolean, walk: Walk): Part {
  if (typeof value === 'string') return compileText(value, path, inItem, walk);
  if (Array.isArray(value)) {
    const parts = value.map((item, i) => compileValue(item, [...path, i], inItem, walk));
    if (parts.every((p) => p.constant))
      return { constant: true, value: parts.map((p) => (p.constant ? p.value : undefined)) };
    const items = parts.map(jsonOf);
    return {
      constant: false,
      evaluate: (ctx, index, budget) => parts.map((p) => (p.constant ? p.value : p.evaluate(ctx, index, budget))),
      json: (ctx, index, budget) => jsonList(items, ctx, index, budget),
    };
  }
  if (value === null || typeof value !== 'object') return { constant: true, value };
  const map = value as Record<string, unknown>;
  if (Object.hasOwn(map, '$repeat') || Object.hasOwn(map, '$item')) return compileRepeat(map, path, inItem, walk);
  const entries = Object.entries(map).map(
    ([key, item]) => [key, compileValue(item, [...path, key], inItem, walk)] as const,
  );
  if (entries.every(([, p]) => p.constant))
    return {
      constant: true,
      value: Object.fromEntries(entries.map(([key, p]) => [key, p.constant ? p.value : undefined])),
    };
  // The keys in the order the body object would list them (integer-like keys first), each as `"key":`.
  const order = Object.keys(Object.fromEntries(entries));
  const byKey = new Map(entries);
  const members = order.map((key) => [`${JSON.stringify(key)}:`, jsonOf(byKey.get(key) as Part)] as const);
  return {
    constant: false,
    // fromEntries defines own properties, so a `__proto__` key stays a plain key.
    evaluate: (ctx, index, budget) =>
      Object.fromEntries(entries.map(([key, p]) => [key, p.constant ? p.value : p.evaluate(ctx, index, budget)])),
    json: (ctx, index, budget) => {
      let out = '{';
      for (const [key, member] of members) {
        const text = member(ctx, index, budget);
        if (text !== undefined) out += `${out.length === 1 ? '' : ','}${key}${text}`;
      }
      checkText(out);
      return `${out}}`;
    },
  };
}

function compileText(text: string, path: IssuePath, inItem: boolean, walk: Walk): Part {
  if (!hasTemplateSyntax(text)) return { constant: true, value: text };
  const result = compileString(text, { ...walk.options, allowIndex: inItem });
  if (!result.ok) {
    walk.issues.push({ path, message: result.issue.message, offset: result.issue.offset });
    return { constant: true, value: text };
  }
  const compiled = result.value;
  walk.usesFaker ||= compiled.usesFaker;
  walk.usesRandom ||= compiled.usesRandom;
  if (compiled.text !== undefined) return { constant: true, value: compiled.text };
  const { evaluate } = compiled;
  return { constant: false, evaluate, json: (ctx, index) => valueJson(evaluate(ctx, index)) };
}

function compileRepeat(map: Record<string, unknown>, path: IssuePath, inItem: boolean, walk: Walk): Part {
  const extra = Object.keys(map).filter((key) => key !== '$repeat' && key !== '$item');
  for (const key of extra)
    walk.issues.push({
      path: [...path, key],
      message: 'cannot stand beside `$repeat` and `$item`; put it inside `$item`',
    });
  if (!Object.hasOwn(map, '$repeat'))
    walk.issues.push({ path: [...path, '$item'], message: 'needs a `$repeat` count beside it' });
  if (!Object.hasOwn(map, '$item'))
    walk.issues.push({ path: [...path, '$repeat'], message: 'needs an `$item` beside it: the body of each item' });
  const countValue = map.$repeat;
  const countPath = [...path, '$repeat'];
  let count: Part = { constant: true, value: 0 };
  if (typeof countValue === 'number') {
    if (!Number.isInteger(countValue) || countValue < 0 || countValue > MAX_REPEAT) {
      walk.issues.push({
        path: countPath,
        message: `must be a whole number from 0 to ${MAX_REPEAT}, or an expression`,
      });
    }
    count = { constant: true, value: countValue };
  } else if (typeof countValue === 'string' && hasTemplateSyntax(countValue)) {
    count = compileText(countValue, countPath, inItem, walk);
  } else if (Object.hasOwn(map, '$repeat')) {
    walk.issues.push({ path: countPath, message: 'must be a whole number or an expression such as "${query.limit}"' });
  }
  const item = compileValue(map.$item, [...path, '$item'], true, walk);
  /** The list's length for one request, counted against the answer's items before any is made. */
  const lengthOf = (ctx: RequestContext, index: number | undefined, budget: Budget): number => {
    const n = numberOf(count.constant ? count.value : count.evaluate(ctx, index, budget));
    const length = n === undefined ? 0 : Math.min(Math.max(Math.trunc(n), 0), MAX_REPEAT);
    spendItems(budget, length);
    return length;
  };
  const itemJson = jsonOf(item);
  return {
    constant: false,
    evaluate: (ctx, index, budget) => {
      const length = lengthOf(ctx, index, budget);
      const list: unknown[] = new Array<unknown>(length);
      for (let i = 0; i < length; i++) list[i] = item.constant ? item.value : item.evaluate(ctx, i, budget);
      return list;
    },
    json: (ctx, index, budget) => {
      const length = lengthOf(ctx, index, budget);
      let out = '[';
      for (let i = 0; i < length; i++) {
        out += `${i === 0 ? '' : ','}${itemJson(ctx, i, budget) ?? 'null'}`;
        checkText(out);
      }
      return `${out}]`;
    },
  };
}
