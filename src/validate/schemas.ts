import { createRequire } from 'node:module';
import type { Description } from '../description/description.js';
import type { JsonObject } from '../description/json-pointer.js';
import { canonicalRefs } from '../description/pointers.js';
import { adjusted, type Direction } from '../description/adjust.js';
import { ajvRegExp } from '../regex/linear-regex.js';

export type { Direction } from '../description/adjust.js';

/**
 * JSON Schema validation of a description's schemas with ajv (draft-07 for OpenAPI 3.0, 2020-12
 * for 3.1) and ajv-formats, loaded on first use: only a config with `openapi.spec` pays for them.
 * A schema is compiled the first time a request needs it, against a copy of the description
 * adjusted for requests (adjust.ts: 3.0's `nullable` and boolean `exclusiveMinimum`/`exclusiveMaximum`
 * read as JSON Schema, in 3.1 files too; readOnly properties not required), so every `$ref` in it resolves.
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
  addFormat(name: string, format: RegExp | boolean | NumberFormat): unknown;
}

/** A format ajv checks on numbers only (a string, say, is left to `type`). */
interface NumberFormat {
  type: 'number';
  validate: (value: number) => boolean;
}

type AjvClass = new (options: Record<string, unknown>) => AjvLike;

interface Loaded {
  draft7: AjvClass;
  draft2020: AjvClass;
  formats: (ajv: AjvLike) => void;
}

let loaded: Loaded | undefined;

/**
 * ajv, its 2020-12 flavour and ajv-formats, required when the first schema is compiled (they are
 * CommonJS): a server with `openapi.spec` does not load them before a request needs them.
 */
function requireAjv(): Loaded {
  const require = createRequire(import.meta.url);
  const main = <T>(module: unknown): T => ((module as { default?: T }).default ?? module) as T;
  return {
    draft7: main(require('ajv')),
    draft2020: main(require('ajv/dist/2020.js')),
    formats: main(require('ajv-formats')),
  };
}

/** Loads ajv, its 2020-12 flavour and ajv-formats ahead of the first compile (require()d from node_modules by the CLI bundle). */
export async function loadAjv(): Promise<void> {
  if (loaded !== undefined) return;
  const draft7 = (await import('ajv')) as unknown as { default: AjvClass };
  const draft2020 = (await import('ajv/dist/2020.js')) as unknown as { default: AjvClass };
  const formats = (await import('ajv-formats')) as unknown as { default: (ajv: AjvLike) => void };
  loaded = { draft7: draft7.default, draft2020: draft2020.default, formats: formats.default };
}

/** Whole numbers in [-2^31, 2^31 - 1]. */
const INT32: NumberFormat = {
  type: 'number',
  validate: (value) => Number.isInteger(value) && value >= -(2 ** 31) && value <= 2 ** 31 - 1,
};

/**
 * Whole numbers in [-2^63, 2^63 - 1]. A JavaScript number cannot tell 2^63 - 1 from 2^63 (both read
 * as 9223372036854775808, as does every integer from 2^63 - 512 up): 2^63 is accepted with them
 * rather than refusing 9223372036854775807, the largest int64, which clients send to mean "no limit"
 * (a mock refuses nothing a real API would take).
 */
const INT64: NumberFormat = {
  type: 'number',
  validate: (value) => Number.isInteger(value) && value >= -(2 ** 63) && value <= 2 ** 63,
};

/**
 * OpenAPI's own formats, which JSON Schema does not define: int32, int64, float, double, byte,
 * binary, password. int32 and int64 are number formats: checked on numbers (a parameter's text once
 * read as a number), while a value that is no number is only the `type`'s violation.
 */
function addOpenApiFormats(ajv: AjvLike): void {
  ajv.addFormat('int32', INT32);
  ajv.addFormat('int64', INT64);
  for (const name of ['float', 'double', 'binary', 'password']) ajv.addFormat(name, true);
  ajv.addFormat('byte', /^[A-Za-z0-9+/]*={0,2}$/);
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

/** The schema set of `description` (ajv is loaded when it first compiles, unless {@link loadAjv} ran). */
export function schemaSet(description: Description): SchemaSet {
  const known = sets.get(description.hash);
  if (known !== undefined) return known;
  const v30 = description.version === '3.0';
  const make = (coerceTypes: false | 'array', direction: Direction): AjvLike => {
    loaded ??= requireAjv();
    const Ajv = v30 ? loaded.draft7 : loaded.draft2020;
    const ajv = new Ajv({
      strict: false,
      allErrors: true,
      logger: false,
      coerceTypes,
      validateSchema: false,
      unicodeRegExp: false,
      inlineRefs: false,
      code: { optimize: false, regExp: ajvRegExp },
    });
    loaded!.formats(ajv);
    addOpenApiFormats(ajv);
    const doc = adjusted(description.doc, direction) as JsonObject;
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
      return ajv.compile({
        type: 'object',
        properties: Object.fromEntries(Object.entries(properties).map(([name, pointer]) => [name, ref(pointer)])),
        required,
      });
    },
    compileResponseAt(pointer) {
      return (responses ??= make(false, 'response')).compile(ref(pointer));
    },
  };
  if (sets.size > 8) sets.clear();
  sets.set(description.hash, set);
  return set;
}
