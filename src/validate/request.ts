import type { IncomingHttpHeaders } from 'node:http';
import { parseCookies } from '../answer/request-context.js';
import { MAX_BODY_DEPTH, nestsWithin } from '../http/request-body.js';
import { deref, isObject, type Json, type JsonObject } from '../openapi/json-pointer.js';
import type { Description, Operation } from './description.js';
import { assign, isFormType, parseFormBody, parseMultipart } from './form.js';
import type { AjvError, SchemaCheck, SchemaSet } from './schemas.js';
import { encodeToken } from './pointers.js';
import { paramOf, pointerSegment, sortViolations, type Violation, type ViolationPlace } from './violations.js';

/** What request validation reads of a request. */
export interface RequestInput {
  /** The request path under `/mock` (`/v1/charges/ch_1`). */
  mockPath: string;
  /** `req.url` as sent: its query string is read. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The whole body, when the request had one. */
  body: Buffer | undefined;
  /** The body as answers read it (parsed JSON, else text), when it was read: JSON is not parsed twice. */
  parsed?: unknown;
  /** The values of the endpoint's own `:name` segments, in order (decoded): the path parameters when the request path is not the description's. */
  routeValues?: () => string[];
}

type ParamPlace = Exclude<ViolationPlace, 'body'>;
const PARAM_PLACES: readonly ParamPlace[] = ['path', 'query', 'header', 'cookie'];
/** Headers OpenAPI says a description's header parameters never describe. */
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

interface CompiledPlace {
  params: JsonObject[];
  check: SchemaCheck;
}

interface CompiledOperation {
  places: Map<ParamPlace, CompiledPlace>;
}

const compiledOps = new WeakMap<Operation, CompiledOperation>();

function typesOf(doc: JsonObject, schema: Json | undefined): string[] {
  const node = deref(doc, schema);
  if (!isObject(node)) return [];
  if (typeof node.type === 'string') return [node.type];
  if (Array.isArray(node.type)) return node.type.filter((t): t is string => typeof t === 'string');
  for (const key of ['allOf', 'oneOf', 'anyOf'] as const) {
    const list = node[key];
    if (Array.isArray(list)) for (const item of list) {
      const found = typesOf(doc, item);
      if (found.length > 0) return found;
    }
  }
  return [];
}

function compileOperation(set: SchemaSet, operation: Operation): CompiledOperation {
  const places = new Map<ParamPlace, CompiledPlace>();
  for (const place of PARAM_PLACES) {
    const found = operation.parameters.filter(({ param }) => param.in === place && !(place === 'header' && IGNORED_HEADERS.has(String(param.name).toLowerCase())));
    if (found.length === 0) continue;
    const key = (p: JsonObject): string => (place === 'header' ? String(p.name).toLowerCase() : String(p.name));
    const withSchema = found.filter(({ param }) => param.schema !== undefined);
    const properties = Object.fromEntries(withSchema.map(({ param, pointer }) => [key(param), `${pointer}/schema`]));
    const required = found.filter(({ param }) => param.required === true || place === 'path').map(({ param }) => key(param));
    places.set(place, { params: found.map(({ param }) => param), check: set.compileParams(properties, required) });
  }
  return { places };
}

/** The pointer of the media type `content` has for `type` under the request body at `bodyPointer`. */
function mediaPointer(bodyPointer: string, type: string): string {
  return `${bodyPointer}/content/${encodeToken(type)}`;
}

/** The values of each query name, decoded, in order. */
function readQuery(url: string): Map<string, string[]> {
  const query = new Map<string, string[]>();
  const at = url.indexOf('?');
  if (at === -1) return query;
  for (const pair of url.slice(at + 1).split('#')[0]!.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const decode = (text: string): string => {
      try {
        return decodeURIComponent(text.replace(/\+/g, ' '));
      } catch {
        return text;
      }
    };
    const name = decode(eq === -1 ? pair : pair.slice(0, eq));
    const list = query.get(name) ?? [];
    list.push(decode(eq === -1 ? '' : pair.slice(eq + 1)));
    query.set(name, list);
  }
  return query;
}

const DELIMITERS: Record<string, RegExp> = { form: /,/, simple: /,/, spaceDelimited: / /, pipeDelimited: /\|/ };

/** A query parameter's value as its `style` and `explode` write it; undefined when absent. */
function queryValue(doc: JsonObject, param: JsonObject, query: Map<string, string[]>): unknown {
  const name = String(param.name);
  const style = typeof param.style === 'string' ? param.style : 'form';
  const explode = typeof param.explode === 'boolean' ? param.explode : style === 'form';
  const types = typesOf(doc, param.schema);
  if (style === 'deepObject' || (types.includes('object') && style === 'form' && explode)) {
    const object = Object.create(null) as Record<string, unknown>;
    let found = false;
    for (const [key, values] of query) {
      if (style === 'deepObject' ? !key.startsWith(`${name}[`) : key === name) continue;
      if (style !== 'deepObject') {
        const props = deref(doc, param.schema);
        if (!isObject(props) || !isObject(props.properties) || !(key in props.properties)) continue;
      }
      found = true;
      for (const value of values) assign(object, style === 'deepObject' ? key : key, value);
    }
    if (style === 'deepObject') {
      const nested = (object as Record<string, unknown>)[name];
      return found ? nested : undefined;
    }
    return found ? object : undefined;
  }
  const values = query.get(name);
  if (values === undefined) return undefined;
  if (types.includes('array')) return explode ? values : values.flatMap((v) => v.split(DELIMITERS[style] ?? /,/));
  if (types.includes('object')) {
    const parts = (values[0] ?? '').split(DELIMITERS[style] ?? /,/);
    const object = Object.create(null) as Record<string, string>;
    for (let i = 0; i + 1 < parts.length; i += 2) object[parts[i] as string] = parts[i + 1] as string;
    return object;
  }
  return values[0];
}

/** A `simple`-style value (path, header): arrays split at commas. */
function simpleValue(doc: JsonObject, param: JsonObject, raw: string): unknown {
  return typesOf(doc, param.schema).includes('array') ? raw.split(',') : raw;
}

function collect(place: ParamPlace, doc: JsonObject, operation: Operation, params: JsonObject[], input: RequestInput): Record<string, unknown> {
  const data = Object.create(null) as Record<string, unknown>;
  if (place === 'path') {
    // The description's path (under its server's base path), else the endpoint's own segments in order.
    const match = operation.pathPattern.exec(input.mockPath);
    const values = match === null ? input.routeValues?.() : undefined;
    if (match === null && values === undefined) return data;
    operation.pathNames.forEach((name, i) => {
      const param = params.find((p) => p.name === name);
      let raw = match === null ? values?.[i] : (match[i + 1] as string);
      if (raw === undefined) return;
      if (match !== null) {
        try {
          raw = decodeURIComponent(raw);
        } catch {
          // kept as sent
        }
      }
      data[name] = param === undefined ? raw : simpleValue(doc, param, raw);
    });
    return data;
  }
  if (place === 'query') {
    const query = readQuery(input.url);
    for (const param of params) {
      const value = queryValue(doc, param, query);
      if (value !== undefined) data[String(param.name)] = value;
    }
    return data;
  }
  if (place === 'header') {
    for (const param of params) {
      const name = String(param.name).toLowerCase();
      const value = input.headers[name];
      if (value !== undefined) data[name] = simpleValue(doc, param, Array.isArray(value) ? value.join(', ') : value);
    }
    return data;
  }
  const header = input.headers.cookie;
  const cookies = parseCookies(Array.isArray(header) ? header.join('; ') : header);
  for (const param of params) {
    const value = cookies[String(param.name)];
    if (value !== undefined) data[String(param.name)] = simpleValue(doc, param, value);
  }
  return data;
}

const PLACE_LABEL: Record<ViolationPlace, string> = { path: 'path parameter', query: 'query parameter', header: 'header', cookie: 'cookie', body: 'body field' };

/** An ajv error as a violation at `place`. */
function toViolation(place: ViolationPlace, error: AjvError): Violation {
  let pointer = error.instancePath;
  let keyword = error.keyword;
  let message = error.message ?? 'is invalid';
  const extra = error.params.missingProperty ?? error.params.additionalProperty ?? error.params.unevaluatedProperty;
  if (typeof extra === 'string') pointer += `/${pointerSegment(extra)}`;
  if (keyword === 'required') message = 'is required';
  else if (keyword === 'additionalProperties' || keyword === 'unevaluatedProperties') message = 'is not allowed';
  else if (keyword === 'enum' && Array.isArray(error.params.allowedValues)) message = `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
  if (keyword === 'errorMessage') keyword = 'invalid';
  const param = paramOf(pointer);
  const label = param === null ? 'the body' : `${PLACE_LABEL[place]} ${param}`;
  return { in: place, pointer, param, keyword, message: `${label} ${message}` };
}

/** The media type of `content` a request's content type picks: exact, then `type/*`, then `*\/*`. */
function mediaFor(content: JsonObject, contentType: string): { media: JsonObject; type: string } | undefined {
  const wanted = contentType.split(';')[0]!.trim().toLowerCase();
  const entries = Object.entries(content).map(([k, v]) => [k.split(';')[0]!.trim().toLowerCase(), v, k] as const);
  const pick = entries.find(([k]) => k === wanted) ?? entries.find(([k]) => k === `${wanted.split('/')[0]}/*`) ?? entries.find(([k]) => k === '*/*');
  return pick !== undefined && isObject(pick[1]) ? { media: pick[1], type: pick[2] } : undefined;
}

function checkBody(set: SchemaSet, operation: Operation, input: RequestInput, out: Violation[]): void {
  const requestBody = operation.requestBody;
  if (requestBody === undefined) return;
  const empty = input.body === undefined || input.body.length === 0;
  if (empty) {
    if (requestBody.required === true) out.push({ in: 'body', pointer: '', param: null, keyword: 'required', message: 'the body is required' });
    return;
  }
  const content = isObject(requestBody.content) ? requestBody.content : {};
  const header = input.headers['content-type'] ?? '';
  const picked = mediaFor(content, header);
  if (picked === undefined) {
    const accepted = Object.keys(content).join(', ');
    out.push({ in: 'body', pointer: '', param: null, keyword: 'contentType', message: `the body's content type ${JSON.stringify(header.split(';')[0]!.trim())} is not one the operation accepts (${accepted})` });
    return;
  }
  if (picked.media.schema === undefined) return;
  const bytes = input.body as Buffer;
  let value: unknown;
  let coerce = true;
  if (/^[^;]*[/+]json\s*(;|$)/i.test(header)) {
    coerce = false;
    try {
      if (input.parsed !== undefined && typeof input.parsed !== 'string') value = input.parsed;
      else if (!nestsWithin(bytes, MAX_BODY_DEPTH)) throw new Error('too deep');
      else value = JSON.parse(bytes.toString('utf8'));
    } catch {
      out.push({ in: 'body', pointer: '', param: null, keyword: 'parse', message: 'the body is not valid JSON' });
      return;
    }
  } else if (isFormType(header)) value = parseFormBody(bytes.toString('utf8'));
  else if (/^\s*multipart\/form-data/i.test(header)) {
    value = parseMultipart(bytes, header);
    if (value === undefined) {
      out.push({ in: 'body', pointer: '', param: null, keyword: 'parse', message: 'the multipart body cannot be read (no boundary)' });
      return;
    }
  } else return;
  const check = set.compileAt(`${mediaPointer(operation.requestBodyPointer as string, picked.type)}/schema`, coerce);
  if (!check(value)) for (const error of check.errors ?? []) out.push(toViolation('body', error));
}

/** Every way `input` breaks `operation`, sorted; [] when it follows the description. */
export function validateRequest(description: Description, set: SchemaSet, operation: Operation, input: RequestInput): Violation[] {
  let compiled = compiledOps.get(operation);
  if (compiled === undefined) compiledOps.set(operation, (compiled = compileOperation(set, operation)));
  const out: Violation[] = [];
  for (const [place, { params, check }] of compiled.places) {
    const data = collect(place, description.doc, operation, params, input);
    if (!check(data)) for (const error of check.errors ?? []) out.push(toViolation(place, error));
  }
  checkBody(set, operation, input, out);
  return out.length === 0 ? out : sortViolations(out);
}

/** Compiles every schema of every operation (parameters and request bodies); the problems found, one per operation. */
export function compileAll(description: Description, set: SchemaSet): string[] {
  const problems: string[] = [];
  for (const operation of description.operations.values()) {
    try {
      if (!compiledOps.has(operation)) compiledOps.set(operation, compileOperation(set, operation));
      const content = operation.requestBody?.content;
      if (isObject(content) && operation.requestBodyPointer !== undefined) {
        for (const [type, media] of Object.entries(content)) {
          if (isObject(media) && media.schema !== undefined) set.compileAt(`${mediaPointer(operation.requestBodyPointer, type)}/schema`, !/[/+]json\s*(;|$)/i.test(type));
        }
      }
    } catch (err) {
      problems.push(`${operation.key}: a schema cannot be compiled: ${(err as Error).message}`);
    }
  }
  return problems;
}
