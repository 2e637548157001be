/** Names no path may read, so nothing reaches an object's prototype or constructor. */
export const FORBIDDEN_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The same text as the engine's shared (internalized) copy. A property name cut from the config
 * (`segment.slice(1)`, `name.toLowerCase()`) is a fresh string; reading or writing a property with
 * it can make V8's inline cache miss on every request instead of once (seen as a `when` endpoint
 * served 20 % slower once faker's data, which holds the same names, was loaded). Names that the
 * request path uses as keys go through this once, when the config is compiled.
 */
export function internalize(name: string): string {
  // A property key is always stored internalized, and Object.keys hands back that copy.
  return Object.keys({ [name]: 0 })[0] ?? name;
}

/**
 * `value[key]` when `value` is an object or list that has `key` as its own property, else
 * undefined ("missing values read as nothing"). Own properties only (`Object.hasOwn`), and never a
 * forbidden name, so no read can reach a prototype, a getter of a built-in or a function.
 */
export function readOwn(value: unknown, key: unknown): unknown {
  if (value === null || typeof value !== 'object') return undefined;
  const name = typeof key === 'number' ? String(key) : key;
  if (typeof name !== 'string' || FORBIDDEN_NAMES.has(name) || !Object.hasOwn(value, name)) return undefined;
  const found: unknown = (value as Record<string, unknown>)[name];
  return typeof found === 'function' ? undefined : found;
}

/** A value as text inside a string: nothing and null → "", text as is, lists and objects as JSON. */
export function textOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? '';
}

/** A value read as a number: numbers as they are, text that is a finite number; else undefined. */
export function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** `??`'s test: undefined and null are nothing. */
export function isNothing(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

/**
 * A faker result made fit for JSON: a Date becomes its ISO text, a bigint its decimal text,
 * functions and symbols nothing; lists and plain objects are converted item by item.
 */
export function toJsonValue(value: unknown, depth = 0): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.toISOString();
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (value === null || typeof value !== 'object' || depth > 16) return value;
  if (Array.isArray(value)) return value.map((item) => toJsonValue(item, depth + 1) ?? null);
  const out: Array<[string, unknown]> = [];
  for (const [key, item] of Object.entries(value)) out.push([key, toJsonValue(item, depth + 1)]);
  return Object.fromEntries(out);
}
