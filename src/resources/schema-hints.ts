import type { Config } from '../config/types.js';
import { deref, isObject, type Json, type JsonObject } from '../description/json-pointer.js';
import { loadDescription, operationFor, type Description } from '../description/description.js';
import type { CompiledResource } from './compile.js';

/**
 * The types a form value takes from the OpenAPI description of its operation (`openapi.spec`):
 * `amount=2000` is the number 2000 where the request body's schema says `integer`, even when the
 * collection's `fields` give no default. A hint is a value of the right type at each field (0,
 * 0.5 for `number`, false, '', nested mappings and lists), which form typing reads as it reads the defaults.
 */

const FORM_TYPES = ['application/x-www-form-urlencoded', 'application/json', 'multipart/form-data'];
/** Deeper schemas give no hint: a recursive schema stops here. */
const MAX_DEPTH = 8;

function hintOf(doc: JsonObject, schema: Json | undefined, depth: number): unknown {
  const s = deref(doc, schema);
  if (!isObject(s) || depth > MAX_DEPTH) return undefined;
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = s[key];
    if (!Array.isArray(list)) continue;
    if (key === 'allOf') return Object.assign({}, ...list.map((part) => hintOf(doc, part, depth + 1)).filter(isObject));
    for (const part of list) {
      const hint = hintOf(doc, part, depth + 1);
      if (hint !== undefined && hint !== null) return hint;
    }
  }
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  if (type === 'integer') return 0;
  if (type === 'number') return 0.5; // (not a whole number: a form value may have a fraction)
  if (type === 'boolean') return false;
  if (type === 'string') return '';
  if (type === 'array') return [hintOf(doc, s.items, depth + 1)];
  if (type === 'object' || isObject(s.properties)) {
    const out: Record<string, unknown> = {};
    for (const [name, property] of Object.entries(isObject(s.properties) ? s.properties : {}))
      out[name] = hintOf(doc, property, depth + 1);
    return out;
  }
  return undefined;
}

function bodyHint(description: Description, method: string, path: string): Record<string, unknown> | undefined {
  const operation = operationFor(description, method, path, undefined);
  const body = deref(description.doc, operation?.requestBody as Json | undefined);
  const content = isObject(body) && isObject(body.content) ? body.content : undefined;
  if (content === undefined) return undefined;
  for (const type of FORM_TYPES) {
    const media = content[type];
    if (isObject(media)) {
      const hint = hintOf(description.doc, media.schema, 0);
      if (isObject(hint)) return hint as Record<string, unknown>;
    }
  }
  return undefined;
}

/** `create` and `update` hints of each collection, by `<name> create` / `<name> update`; empty without `openapi.spec`. */
export async function schemaHints(
  config: Config,
  resources: readonly CompiledResource[],
): Promise<Map<string, Record<string, unknown>>> {
  const hints = new Map<string, Record<string, unknown>>();
  if (config.openapi === undefined || resources.length === 0) return hints;
  const loaded = await loadDescription(config.openapi.spec);
  if (!loaded.ok) return hints;
  const base = config.server.basePath ?? '/mock';
  for (const resource of resources) {
    const path = resource.config.path.replace(/\/$/, '');
    const paths = [path, `${base}${path}`];
    const find = (method: string, at: (p: string) => string): Record<string, unknown> | undefined => {
      for (const p of paths) {
        const hint = bodyHint(loaded.description, method, at(p));
        if (hint !== undefined) return hint;
      }
      return undefined;
    };
    const create = find('POST', (p) => p);
    const update = find(resource.style.update('POST') === 'merge' ? 'POST' : 'PATCH', (p) => `${p}/:id`);
    if (create !== undefined) hints.set(`${resource.name} create`, create);
    if (update !== undefined) hints.set(`${resource.name} update`, update);
  }
  return hints;
}
