/**
 * Request bodies and query strings as a resource reads them: JSON, or form-encoded with brackets
 * as Stripe's SDK sends them (`metadata[order]=6735`, `items[0][price]=p_1`, `expand[]=customer`)
 * read into nested objects, an empty value (`metadata[key]=`) read as null (which removes a key).
 * Form values are text until {@link typeForm} gives them the type of the value they replace.
 * A key that could reach an object's prototype is refused, never used. Here: a body read by its
 * content type; what may be read (form-limits.ts), forms parsed (form-parse.ts, over form-names.ts
 * and form-decode.ts) and typed (form-type.ts), all exported from here too.
 */

import { checkKeys, BadInput } from './form-limits.js';
import { parseForm } from './form-parse.js';

export { BadInput, checkKeys, FORBIDDEN_KEYS, MAX_FORM_DEPTH, MAX_FORM_INDEX, TooDeep } from './form-limits.js';
export { decodeFormPart } from './form-decode.js';
export { bracketKeys } from './form-names.js';
export { parseForm } from './form-parse.js';
export { typeForm } from './form-type.js';

type Obj = Record<string, unknown>;

const isJsonType = (type: string): boolean => /^\s*application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(type);
const isFormType = (type: string): boolean =>
  type === 'application/x-www-form-urlencoded' || /^\s*application\/x-www-form-urlencoded\s*(;|$)/i.test(type);

/** What a request body holds: a mapping of fields, and whether it came as a form (its values then text). */
export interface ReadBody {
  fields: Obj;
  form: boolean;
}

/**
 * Reads a body by its content type (JSON, a form, or — without a type — whichever it looks like);
 * `jsonOnly` (GitHub's API, which reads no form): as JSON whatever the type, `Problems parsing
 * JSON` when it is not.
 */
export function readBody(bytes: Buffer | undefined, contentType: string | undefined, jsonOnly = false): ReadBody {
  if (bytes === undefined || bytes.length === 0) return { fields: {}, form: false };
  const text = bytes.toString('utf8');
  const type = contentType ?? '';
  const json = jsonOnly || (!isFormType(type) && (isJsonType(type) || /^\s*[[{]/.test(text)));
  if (!json) return { fields: parseForm(text, true), form: true };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    if (jsonOnly) throw new BadInput('Problems parsing JSON', null);
    throw new BadInput(`Invalid JSON in the request body: ${(err as Error).message}`, null);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new BadInput('The request body must be a JSON object', null);
  return { fields: checkKeys(value) as Obj, form: false };
}
