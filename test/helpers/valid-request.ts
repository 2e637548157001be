// A valid request for an operation of an OpenAPI description, built from its schemas: path
// parameters, required query, header and cookie parameters, and a required body (JSON, form or
// multipart with scalar fields), each value made by openapi-sampler from the schema (required
// properties only) as mockapi's import expands it. A body is held to its schema by a plain ajv of
// its own (not mockapi's validator, which is what the corpus test checks): when the required-only
// sample breaks it (`anyOf: [{required: [a]}, {required: [b]}]`, a form field that encodes to
// nothing), every property is sampled instead, and when that breaks it too no request is built
// (a skip, with its reason). Used by the corpus test to check that request validation accepts
// what the description allows.
import { createRequire } from 'node:module';
import type { Sampler } from '../../src/openapi/sample.js';
import { createExpander } from '../../src/openapi/schema-expand.js';
import { createPatternString, type RandExpClass } from '../../src/openapi/pattern.js';
import { deref, isObject, type Json, type JsonObject } from '../../src/description/json-pointer.js';

const require = createRequire(import.meta.url);
const sampler = (require('openapi-sampler') as { sample: Sampler }).sample;
const RandExp = require('randexp') as RandExpClass;

interface PlainAjv {
  addSchema(schema: object, key: string): unknown;
  compile(schema: object): (data: unknown) => boolean;
}
type PlainAjvClass = new (options: Record<string, unknown>) => PlainAjv;
const main = <T>(module: unknown): T => ((module as { default?: T }).default ?? module) as T;

/** The description's `$ref`s from `schema` on, pointing into it as ajv holds it (`doc.json`). */
function intoDoc(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(intoDoc);
  if (!isObject(schema)) return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([k, v]) => [
      k,
      k === '$ref' && typeof v === 'string' && v.startsWith('#') ? `doc.json${v}` : intoDoc(v),
    ]),
  );
}

/** A check of values against schemas of `doc`, by plain ajv (draft-07 for 3.0, 2020-12 for 3.1); unknown keywords and formats ignored. */
function plainCheck(doc: JsonObject): (schema: Json, value: unknown) => boolean {
  const v31 = String(doc.openapi).startsWith('3.1');
  const Ajv = main<PlainAjvClass>(v31 ? require('ajv/dist/2020.js') : require('ajv'));
  const ajv = new Ajv({ strict: false, logger: false, validateSchema: false, allErrors: false });
  main<(a: PlainAjv) => void>(require('ajv-formats'))(ajv);
  ajv.addSchema(doc, 'doc.json');
  return (schema, value) => {
    try {
      return ajv.compile(intoDoc(schema) as object)(value);
    } catch {
      return true; // a schema plain ajv cannot compile: the sample is sent as it is
    }
  };
}

/** A request ready to send (its path without the server's prefix), or why none was built. */
export type BuiltRequest =
  { path: string; query: string; headers: Record<string, string>; body?: string } | { skip: string };

const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

function parametersOf(doc: JsonObject, item: JsonObject, operation: JsonObject): JsonObject[] {
  const byPlace = new Map<string, JsonObject>();
  for (const list of [item.parameters, operation.parameters]) {
    const params = deref(doc, list as Json);
    if (!Array.isArray(params)) continue;
    for (const raw of params) {
      const param = deref(doc, raw);
      if (isObject(param) && typeof param.name === 'string' && typeof param.in === 'string')
        byPlace.set(`${param.in} ${param.name}`, param);
    }
  }
  return [...byPlace.values()];
}

/** Brackets for nested values, as Stripe's forms and `deepObject` write them: `a[b][0]=c`. */
function bracketPairs(prefix: string, value: unknown, out: Array<[string, string]>): void {
  if (Array.isArray(value)) value.forEach((v, i) => bracketPairs(`${prefix}[${i}]`, v, out));
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) bracketPairs(prefix === '' ? k : `${prefix}[${k}]`, v, out);
  else out.push([prefix, value === null ? '' : String(value)]);
}

const encode = (pairs: Array<[string, string]>): string =>
  pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');

function queryPairs(param: JsonObject, value: unknown): Array<[string, string]> {
  const name = param.name as string;
  const style = typeof param.style === 'string' ? param.style : 'form';
  const explode = typeof param.explode === 'boolean' ? param.explode : style === 'form';
  const out: Array<[string, string]> = [];
  if (style === 'deepObject') bracketPairs(name, value, out);
  else if (Array.isArray(value)) {
    if (explode) for (const v of value) out.push([name, String(v)]);
    else out.push([name, value.join(style === 'spaceDelimited' ? ' ' : style === 'pipeDelimited' ? '|' : ',')]);
  } else if (value !== null && typeof value === 'object') {
    if (explode) for (const [k, v] of Object.entries(value)) out.push([k, String(v)]);
    else out.push([name, Object.entries(value).flat().join(',')]);
  } else out.push([name, value === null ? '' : String(value)]);
  return out;
}

const simple = (value: unknown): string =>
  Array.isArray(value)
    ? value.join(',')
    : value !== null && typeof value === 'object'
      ? Object.entries(value).flat().join(',')
      : String(value);

/**
 * An expanded schema without its `example`s: the sampler would take them, and a description's own
 * example may break its schema (OpenAI's `examples` property has a string as its example where the
 * schema wants a list): the request is made from the schema alone. (`properties` maps keep their names.)
 */
function withoutExamples(schema: Json, inProperties = false): Json {
  if (Array.isArray(schema)) return schema.map((item) => withoutExamples(item));
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(schema)) {
    // A `pattern`'s string is one the expander made (mockapi's import puts it in `example`).
    if (!inProperties && (key === 'examples' || (key === 'example' && typeof schema.pattern !== 'string'))) continue;
    out[key] = withoutExamples(child, !inProperties && (key === 'properties' || key === 'patternProperties'));
  }
  return out;
}

/** Builds the requests of one description. */
export function requestBuilder(doc: JsonObject): (template: string, method: string, routePath: string) => BuiltRequest {
  const expand = createExpander(doc, { patternString: createPatternString(RandExp) });
  const holds = plainCheck(doc);
  const value = (schema: Json | undefined, skipNonRequired = true): unknown => {
    if (schema === undefined) return 'x';
    const expanded = withoutExamples(expand(schema));
    return isObject(expanded) ? sampler(expanded, { skipReadOnly: true, skipNonRequired, quiet: true }) : null;
  };
  /** A body for `schema` that satisfies it (and, for a form, whose every field encodes to something), or undefined. */
  const bodyOf = (schema: Json | undefined, form: boolean): { body: unknown } | undefined => {
    for (const skipNonRequired of [true, false]) {
      const body = value(schema, skipNonRequired);
      if (schema !== undefined && !holds(schema, body)) continue;
      if (form && isObject(body as Json)) {
        const pairs: Array<[string, string]> = [];
        bracketPairs('', body, pairs);
        const fields = new Set(pairs.map(([k]) => k.split('[')[0]));
        if (Object.keys(body as JsonObject).some((k) => !fields.has(k))) continue;
      }
      return { body };
    }
    return undefined;
  };
  return (template, method, routePath) => {
    const item = deref(doc, (doc.paths as JsonObject)[template] as Json) as JsonObject;
    const operation = deref(doc, item[method]) as JsonObject;
    const params = parametersOf(doc, item, operation);
    const pathValues = new Map<string, string>();
    const query: Array<[string, string]> = [];
    const headers: Record<string, string> = {};
    const cookies: string[] = [];
    for (const param of params) {
      const name = param.name as string;
      if (param.in === 'path') pathValues.set(name, simple(value(param.schema as Json)));
      else if (param.required !== true) continue;
      else if (param.in === 'query') query.push(...queryPairs(param, value(param.schema as Json)));
      else if (param.in === 'header' && !IGNORED_HEADERS.has(name.toLowerCase()))
        headers[name.toLowerCase()] = simple(value(param.schema as Json));
      else if (param.in === 'cookie')
        cookies.push(`${name}=${encodeURIComponent(simple(value(param.schema as Json)))}`);
    }
    if (cookies.length > 0) headers.cookie = cookies.join('; ');
    // The route's `:name` segments in order are the template's `{name}`s in order; `::` is a literal `:`.
    const names = [...template.matchAll(/\{([^{}]+)\}/g)].map((m) => m[1] as string);
    let at = 0;
    const path = routePath.replace(/::|:[A-Za-z_][A-Za-z0-9_]*/g, (m) =>
      m === '::' ? ':' : encodeURIComponent(pathValues.get(names[at++] as string) ?? 'x'),
    );
    const built = { path, query: encode(query), headers };
    const requestBody = deref(doc, operation.requestBody);
    if (!isObject(requestBody) || requestBody.required !== true) return built;
    const content = deref(doc, requestBody.content);
    if (!isObject(content)) return built;
    const types = Object.keys(content);
    const type =
      types.find((t) => /[/+]json\b/i.test(t)) ??
      types.find((t) => /x-www-form-urlencoded/i.test(t)) ??
      types.find((t) => /multipart\/form-data/i.test(t));
    if (type === undefined) return { skip: `a body of ${types.join(', ')}` };
    const media = deref(doc, content[type]);
    const made = bodyOf(isObject(media) ? (media.schema as Json) : undefined, !/json/i.test(type));
    if (made === undefined) return { skip: 'no sampled body satisfies its schema' };
    const { body } = made;
    if (/json/i.test(type))
      return { ...built, headers: { ...headers, 'content-type': type }, body: JSON.stringify(body) };
    const pairs: Array<[string, string]> = [];
    bracketPairs('', body, pairs);
    if (/x-www-form-urlencoded/i.test(type))
      return { ...built, headers: { ...headers, 'content-type': type }, body: encode(pairs) };
    if (pairs.some(([k]) => k.includes('['))) return { skip: 'a multipart body with nested fields' };
    const boundary = 'mockapi-corpus-boundary';
    const parts = pairs
      .map(([k, v]) => `--${boundary}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
      .join('');
    return {
      ...built,
      headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: `${parts}--${boundary}--\r\n`,
    };
  };
}
