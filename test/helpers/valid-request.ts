// A valid request for an operation of an OpenAPI description, built from its schemas: path
// parameters, required query, header and cookie parameters, and a required body (JSON, form or
// multipart with scalar fields), each value made by openapi-sampler from the schema (required
// properties only) as mockapi's import expands it. Used by the corpus test to check that request
// validation accepts what the description allows.
import { createRequire } from 'node:module';
import { createExpander, type Sampler } from '../../src/openapi/sample.js';
import { createPatternString, type RandExpClass } from '../../src/openapi/pattern.js';
import { deref, isObject, type Json, type JsonObject } from '../../src/openapi/json-pointer.js';

const require = createRequire(import.meta.url);
const sampler = (require('openapi-sampler') as { sample: Sampler }).sample;
const RandExp = require('randexp') as RandExpClass;

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
  const value = (schema: Json | undefined): unknown => {
    if (schema === undefined) return 'x';
    const expanded = withoutExamples(expand(schema));
    return isObject(expanded) ? sampler(expanded, { skipReadOnly: true, skipNonRequired: true, quiet: true }) : null;
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
    const body = value(isObject(media) ? (media.schema as Json) : undefined);
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
