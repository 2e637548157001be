import { deref, isObject, type Json, type JsonObject } from '../description/json-pointer.js';

/**
 * Numbers written as text (a parameter, a form field, a `deepObject` member): what the API reads
 * as a number is decimal text. ajv's coercion reads text as JavaScript's `Number()` does, which
 * also takes `0x10`, `1e2` or ` 5` for an integer, and `Infinity`; such text is replaced, before the
 * check, by {@link NOT_A_NUMBER}, a value no number schema takes, so the violation is the schema's
 * `type`. What a schema wants is worked out once (a guide); a request pays for its own values.
 */

/** What a parameter's text must be to be read as an integer: an optional minus sign and decimal digits. */
const INTEGER_TEXT = /^-?\d+$/;
/** …as a number: a decimal number, with a fraction and an exponent if need be. */
const NUMBER_TEXT = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/** Text where a number schema wants a number, and the client wrote none the API would read: a value no number schema takes. */
export const NOT_A_NUMBER: Readonly<Record<string, never>> = Object.freeze({});

/**
 * The text a schema (its own `type`, not its alternatives') takes as a number: for `integer` or
 * `number` (with `null` at most beside them), else undefined.
 */
export function numberTextOf(doc: JsonObject, schema: Json | undefined): RegExp | undefined {
  const node = deref(doc, schema);
  if (!isObject(node)) return undefined;
  const types = typeof node.type === 'string' ? [node.type] : Array.isArray(node.type) ? node.type : [];
  if (types.length === 0 || !types.every((t) => t === 'integer' || t === 'number' || t === 'null')) return undefined;
  if (types.includes('number')) return NUMBER_TEXT;
  return types.includes('integer') ? INTEGER_TEXT : undefined;
}

/** `text` itself, or {@link NOT_A_NUMBER} when `pattern` wants a number it is not. */
export function strictNumberText(text: unknown, pattern: RegExp | undefined): unknown {
  return pattern !== undefined && typeof text === 'string' && text !== '' && !pattern.test(text) ? NOT_A_NUMBER : text;
}

/** Where, in a value read from text, a number is wanted: the text's pattern, or an object's members' and an array's items' guides. */
export type NumberGuide = RegExp | { properties?: Record<string, NumberGuide>; items?: NumberGuide };

/** How deep a guide follows a schema (its references may loop). */
const MAX_GUIDE_DEPTH = 8;

/** The guide of `schema` (its properties and items, through references and `allOf`); undefined when no number is wanted anywhere in it. */
export function numberGuideOf(doc: JsonObject, schema: Json | undefined, depth = 0): NumberGuide | undefined {
  const text = numberTextOf(doc, schema);
  if (text !== undefined) return text;
  const node = deref(doc, schema);
  if (!isObject(node) || depth >= MAX_GUIDE_DEPTH) return undefined;
  const properties: Record<string, NumberGuide> = Object.create(null) as Record<string, NumberGuide>;
  let items: NumberGuide | undefined;
  const take = (part: JsonObject): void => {
    if (isObject(part.properties))
      for (const [name, sub] of Object.entries(part.properties)) {
        const guide = numberGuideOf(doc, sub, depth + 1);
        if (guide !== undefined) properties[name] = guide;
      }
    if (part.items !== undefined) items ??= numberGuideOf(doc, part.items, depth + 1);
  };
  take(node);
  if (Array.isArray(node.allOf))
    for (const part of node.allOf) {
      const sub = deref(doc, part);
      if (isObject(sub)) take(sub);
    }
  const named = Object.keys(properties).length > 0;
  if (!named && items === undefined) return undefined;
  return { ...(named ? { properties } : {}), ...(items === undefined ? {} : { items }) };
}

/** `value` (text read as the guide's schema: an object, a list or text) with text no number schema should take replaced, in place. */
export function strictByGuide(guide: NumberGuide | undefined, value: unknown): unknown {
  if (guide === undefined) return value;
  if (guide instanceof RegExp) {
    if (Array.isArray(value)) return value;
    return strictNumberText(value, guide);
  }
  if (Array.isArray(value)) {
    if (guide.items !== undefined)
      for (let i = 0; i < value.length; i++) value[i] = strictByGuide(guide.items, value[i]);
    return value;
  }
  if (guide.properties !== undefined && value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    for (const name of Object.keys(guide.properties))
      if (Object.hasOwn(object, name)) object[name] = strictByGuide(guide.properties[name], object[name]);
  }
  return value;
}
