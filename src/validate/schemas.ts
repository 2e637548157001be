import type { Description } from './description.js';
import type { JsonObject } from '../openapi/json-pointer.js';
import { canonicalRefs } from './pointers.js';
import { ajvRegExp } from '../answer/linear-regex.js';

/**
 * JSON Schema validation of a description's schemas with ajv (draft-07 for OpenAPI 3.0, 2020-12
 * for 3.1) and ajv-formats, loaded on first use: only a config with `openapi.spec` pays for them.
 * A schema is compiled the first time a request needs it, against a copy of the description
 * adjusted for requests (3.0's `nullable` and boolean `exclusiveMinimum`/`exclusiveMaximum` read as
 * JSON Schema; readOnly properties not required), so every `$ref` in it resolves.
 */

/** The part of ajv's ValidateFunction used here. */
export interface SchemaCheck {
  (data: unknown): boolean;
  errors?: AjvError[] | null;
}

/** An ajv error, as used here. */
export interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

interface AjvLike {
  compile(schema: object): SchemaCheck;
  addSchema(schema: object, key: string): unknown;
  addFormat(name: string, format: RegExp | boolean): unknown;
}

type AjvClass = new (options: Record<string, unknown>) => AjvLike;

let loaded: { draft7: AjvClass; draft2020: AjvClass; formats: (ajv: AjvLike) => void } | undefined;

/** Loads ajv, its 2020-12 flavour and ajv-formats (require()d from node_modules by the CLI bundle). */
export async function loadAjv(): Promise<void> {
  if (loaded !== undefined) return;
  const draft7 = (await import('ajv')) as unknown as { default: AjvClass };
  const draft2020 = (await import('ajv/dist/2020.js')) as unknown as { default: AjvClass };
  const formats = (await import('ajv-formats')) as unknown as { default: (ajv: AjvLike) => void };
  loaded = { draft7: draft7.default, draft2020: draft2020.default, formats: formats.default };
}

/** OpenAPI's own formats, which JSON Schema does not define: int32, int64, float, double, byte, binary, password. */
function addOpenApiFormats(ajv: AjvLike): void {
  ajv.addFormat('int32', /^-?\d+$/);
  ajv.addFormat('int64', /^-?\d+$/);
  for (const name of ['float', 'double', 'binary', 'password']) ajv.addFormat(name, true);
  ajv.addFormat('byte', /^[A-Za-z0-9+/]*={0,2}$/);
}

type Node = Record<string, unknown>;

/** Which way a message goes: readOnly properties are not required in a request, writeOnly ones not in an answer. */
export type Direction = 'request' | 'response';

/** A copy of `value` with the schema keywords of OpenAPI 3.0 rewritten as JSON Schema, for `direction`. */
function adjusted(value: unknown, v30: boolean, direction: Direction): unknown {
  if (Array.isArray(value)) return value.map((item) => adjusted(item, v30, direction));
  if (value === null || typeof value !== 'object') return value;
  const out: Node = {};
  for (const [key, child] of Object.entries(value as Node)) out[key] = key === 'example' || key === 'examples' ? child : adjusted(child, v30, direction);
  if (v30) {
    for (const [bound, limit] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
      if (typeof out[bound] !== 'boolean') continue;
      if (out[bound] === true && typeof out[limit] === 'number') {
        out[bound] = out[limit];
        delete out[limit];
      } else delete out[bound];
    }
    if (out.nullable === true) {
      delete out.nullable;
      if (typeof out.type === 'string') out.type = [out.type, 'null'];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    } else if (typeof out.nullable === 'boolean') delete out.nullable;
  }
  // readOnly properties are sent by the server, never by a client: not required in a request;
  // writeOnly ones the other way round.
  if (Array.isArray(out.required) && out.properties !== null && typeof out.properties === 'object') {
    const properties = out.properties as Record<string, Node | undefined>;
    const skip = direction === 'request' ? 'readOnly' : 'writeOnly';
    out.required = (out.required as unknown[]).filter((name) => !(typeof name === 'string' && properties[name]?.[skip] === true));
  }
  return out;
}

/** The schema validator of one description: compiles on first use, keeps what it compiled. */
export interface SchemaSet {
  /** The schema at `pointer` (canonical, see pointers.ts); `coerce`: strings read per the schema's type (parameters, forms). */
  compileAt(pointer: string, coerce: boolean): SchemaCheck;
  /** An object of parameters: each property the schema at its pointer; coerced. */
  compileParams(properties: Record<string, string>, required: string[]): SchemaCheck;
  /** The schema at `pointer` for an answer's body (writeOnly properties not required); not kept. */
  compileResponseAt(pointer: string): SchemaCheck;
}

/** The id the description has inside ajv: schemas are compiled as `$ref`s into it, so they share every compiled `$ref`. */
const DOC_ID = 'mockapi-openapi.json';

/** Schema sets by description hash: a reload with the same description compiles nothing again. */
const sets = new Map<string, SchemaSet>();

/** The schema set of `description`; {@link loadAjv} must have run. */
export function schemaSet(description: Description): SchemaSet {
  const known = sets.get(description.hash);
  if (known !== undefined) return known;
  if (loaded === undefined) throw new Error('ajv is not loaded');
  const v30 = description.version === '3.0';
  const Ajv = v30 ? loaded.draft7 : loaded.draft2020;
  const make = (coerceTypes: false | 'array', direction: Direction): AjvLike => {
    const ajv = new Ajv({ strict: false, allErrors: true, logger: false, coerceTypes, validateSchema: false, unicodeRegExp: false, code: { regExp: ajvRegExp } });
    loaded!.formats(ajv);
    addOpenApiFormats(ajv);
    const doc = adjusted(description.doc, v30, direction) as JsonObject;
    canonicalRefs(doc);
    ajv.addSchema(doc, DOC_ID);
    return ajv;
  };
  let plain: AjvLike | undefined;
  let coercing: AjvLike | undefined;
  let responses: AjvLike | undefined;
  const caches = { plain: new Map<string, SchemaCheck>(), coercing: new Map<string, SchemaCheck>() };
  const ref = (pointer: string): { $ref: string } => ({ $ref: `${DOC_ID}#${pointer}` });
  const set: SchemaSet = {
    compileAt(pointer, coerce) {
      const cache = coerce ? caches.coercing : caches.plain;
      let check = cache.get(pointer);
      if (check === undefined) {
        const ajv = coerce ? (coercing ??= make('array', 'request')) : (plain ??= make(false, 'request'));
        check = ajv.compile(ref(pointer));
        cache.set(pointer, check);
      }
      return check;
    },
    compileParams(properties, required) {
      const ajv = (coercing ??= make('array', 'request'));
      return ajv.compile({ type: 'object', properties: Object.fromEntries(Object.entries(properties).map(([name, pointer]) => [name, ref(pointer)])), required });
    },
    compileResponseAt(pointer) {
      return (responses ??= make(false, 'response')).compile(ref(pointer));
    },
  };
  if (sets.size > 8) sets.clear();
  sets.set(description.hash, set);
  return set;
}
