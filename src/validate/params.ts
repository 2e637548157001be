import type { IncomingHttpHeaders } from 'node:http';
import { parseCookies } from '../answer/request-context.js';
import { deref, isObject, type Json, type JsonObject } from '../description/json-pointer.js';
import type { Operation } from '../description/description.js';
import { assign } from '../http/form-body.js';
import { numberGuideOf, numberTextOf, strictByGuide, strictNumberText, type NumberGuide } from './number-text.js';
import type { ViolationPlace } from './violations.js';

/**
 * Reading an operation's path, query, header and cookie parameters out of a request, as their
 * `style` and `explode` write them. What a parameter's schema says about reading it (its types,
 * style, delimiter, the properties of an exploded object) is worked out once per operation, when
 * it is first validated: a request pays only for reading its own values.
 */

/** Where a parameter is. */
export type ParamPlace = Exclude<ViolationPlace, 'body'>;

/** One parameter, with what reading it needs worked out. */
export interface ParamPlan {
  /** Its name as the description writes it. */
  name: string;
  /** Its name in the object validated: lower case for a header. */
  key: string;
  /** Its schema allows an array: a `simple` value is split at commas. */
  isArray: boolean;
  isObject: boolean;
  style: string;
  explode: boolean;
  /** An object read from several query names (`deepObject`, or exploded `form`). */
  spread: boolean;
  /** `name[`: the start of a `deepObject` parameter's query names. */
  prefix: string;
  /** For an exploded `form` object: the properties its schema names (undefined: none are read). */
  properties: JsonObject | undefined;
  delimiter: RegExp;
  /** The text its schema takes as a number (an `integer` or `number` schema): anything else is no number. */
  numberText?: RegExp;
  /** The same for each item of an array. */
  itemNumberText?: RegExp;
  /** For a spread object (`deepObject`, exploded `form`): where its members want numbers. */
  memberNumbers?: NumberGuide;
  /**
   * For a schema of alternatives (`oneOf`/`anyOf`): each alternative read as its own schema says
   * (`oneOf: [string, array of string]` reads `79,284` as a string for the first, a list for the
   * second). A serialized value cannot say which alternative the client meant, so the parameter is
   * valid when one of them holds (request.ts).
   */
  branches?: Array<{ plan: ParamPlan; pointer: string }>;
}

function typesOf(doc: JsonObject, schema: Json | undefined): string[] {
  const node = deref(doc, schema);
  if (!isObject(node)) return [];
  if (typeof node.type === 'string') return [node.type];
  if (Array.isArray(node.type)) return node.type.filter((t): t is string => typeof t === 'string');
  for (const key of ['allOf', 'oneOf', 'anyOf'] as const) {
    const list = node[key];
    if (Array.isArray(list))
      for (const item of list) {
        const found = typesOf(doc, item);
        if (found.length > 0) return found;
      }
  }
  return [];
}

/** `value` (a parameter's text, a list of them, or the object a spread parameter reads) with text no number schema should take replaced by {@link NOT_A_NUMBER}. */
function strictNumbers(plan: ParamPlan | undefined, value: unknown): unknown {
  if (plan === undefined) return value;
  if (plan.spread) return strictByGuide(plan.memberNumbers, value);
  if (Array.isArray(value))
    return plan.itemNumberText === undefined ? value : value.map((v) => strictNumberText(v, plan.itemNumberText));
  return strictNumberText(value, plan.numberText);
}

const DELIMITERS: Record<string, RegExp> = { form: /,/, simple: /,/, spaceDelimited: / /, pipeDelimited: /\|/ };

/**
 * What reading `param` at `place` needs, worked out once. `schemaPointer`, the canonical pointer of
 * its schema, gives a schema of alternatives its {@link ParamPlan.branches}.
 */
export function planParam(doc: JsonObject, place: ParamPlace, param: JsonObject, schemaPointer?: string): ParamPlan {
  const plan = planOne(doc, place, param);
  const schema = deref(doc, param.schema);
  if (schemaPointer === undefined || !isObject(schema)) return plan;
  const key = Array.isArray(schema.oneOf) ? 'oneOf' : Array.isArray(schema.anyOf) ? 'anyOf' : undefined;
  const list = key === undefined ? [] : (schema[key] as Json[]);
  if (key === undefined || list.length < 2) return plan;
  plan.branches = list.map((branch, i) => ({
    plan: planOne(doc, place, { ...param, schema: branch }),
    pointer: `${schemaPointer}/${key}/${i}`,
  }));
  return plan;
}

function planOne(doc: JsonObject, place: ParamPlace, param: JsonObject): ParamPlan {
  const name = String(param.name);
  const types = typesOf(doc, param.schema);
  const style = typeof param.style === 'string' ? param.style : 'form';
  const explode = typeof param.explode === 'boolean' ? param.explode : style === 'form';
  const spread = style === 'deepObject' || (types.includes('object') && style === 'form' && explode);
  let properties: JsonObject | undefined;
  const schema = deref(doc, param.schema);
  if (spread && style !== 'deepObject' && isObject(schema) && isObject(schema.properties))
    properties = schema.properties;
  return {
    numberText: numberTextOf(doc, schema),
    itemNumberText: isObject(schema) ? numberTextOf(doc, schema.items) : undefined,
    ...(spread ? { memberNumbers: numberGuideOf(doc, schema) } : {}),
    name,
    key: place === 'header' ? name.toLowerCase() : name,
    isArray: types.includes('array'),
    isObject: types.includes('object'),
    style,
    explode,
    spread,
    prefix: `${name}[`,
    properties,
    delimiter: DELIMITERS[style] ?? /,/,
  };
}

const decode = (text: string): string => {
  // Most names and values have nothing to decode: no pattern, no copy.
  if (!text.includes('%')) return text.includes('+') ? text.replace(/\+/g, ' ') : text;
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
};

/** The values of each query name, decoded, in order. */
function readQuery(url: string): Map<string, string[]> {
  const query = new Map<string, string[]>();
  const at = url.indexOf('?');
  if (at === -1) return query;
  for (const pair of url
    .slice(at + 1)
    .split('#')[0]!
    .split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decode(eq === -1 ? pair : pair.slice(0, eq));
    const list = query.get(name) ?? [];
    list.push(decode(eq === -1 ? '' : pair.slice(eq + 1)));
    query.set(name, list);
  }
  return query;
}

/** A query parameter's value as its `style` and `explode` write it; undefined when absent. */
function queryValue(plan: ParamPlan, query: Map<string, string[]>): unknown {
  const { name, style } = plan;
  if (plan.spread) {
    const object = Object.create(null) as Record<string, unknown>;
    let found = false;
    for (const [key, values] of query) {
      if (style === 'deepObject' ? !key.startsWith(plan.prefix) : key === name) continue;
      if (style !== 'deepObject' && (plan.properties === undefined || !(key in plan.properties))) continue;
      found = true;
      for (const value of values) assign(object, key, value);
    }
    if (style === 'deepObject') return found ? object[name] : undefined;
    return found ? object : undefined;
  }
  const values = query.get(name);
  if (values === undefined) return undefined;
  if (plan.isArray) return plan.explode ? values : values.flatMap((v) => v.split(plan.delimiter));
  if (plan.isObject) {
    const parts = (values[0] ?? '').split(plan.delimiter);
    const object = Object.create(null) as Record<string, string>;
    for (let i = 0; i + 1 < parts.length; i += 2) object[parts[i] as string] = parts[i + 1] as string;
    return object;
  }
  return values[0];
}

/** A `simple`-style value (path, header): arrays split at commas. */
function simpleValue(plan: ParamPlan | undefined, raw: string): unknown {
  return plan?.isArray === true ? raw.split(',') : raw;
}

/** A header's value: arrays split at commas, with the spaces HTTP allows around them (`1, 2`). */
function headerValue(plan: ParamPlan, raw: string): unknown {
  return plan.isArray ? raw.trim().split(/[ \t]*,[ \t]*/) : raw;
}

/** A path value that lacks what its style starts with (`;x=` for `matrix`, `.` for `label`): not read. */
const UNREAD = Symbol('unread');

/** `R,100,G,200` read as `{ R: '100', G: '200' }`. */
function pairsOf(parts: string[]): Record<string, string> {
  const object = Object.create(null) as Record<string, string>;
  for (let i = 0; i + 1 < parts.length; i += 2) object[parts[i] as string] = parts[i + 1] as string;
  return object;
}

/** `R=100`, `G=200` read as `{ R: '100', G: '200' }`. */
function assignmentsOf(parts: string[]): Record<string, string> {
  const object = Object.create(null) as Record<string, string>;
  for (const part of parts) {
    const eq = part.indexOf('=');
    object[eq === -1 ? part : part.slice(0, eq)] = eq === -1 ? '' : part.slice(eq + 1);
  }
  return object;
}

/**
 * A `matrix` path value, as OpenAPI's style table writes it: `;x=5`, `;x` (empty), arrays `;x=1,2`
 * (exploded `;x=1;x=2`), objects `;x=R,100,G,200` (exploded `;R=100;G=200`).
 */
function matrixValue(plan: ParamPlan, raw: string): unknown {
  const named = `;${plan.name}`;
  if (plan.isObject && plan.explode) return raw.startsWith(';') ? assignmentsOf(raw.slice(1).split(';')) : UNREAD;
  if (raw === named) return plan.isArray ? [] : plan.isObject ? Object.create(null) : '';
  if (plan.isArray && plan.explode) {
    const items: string[] = [];
    for (const part of raw.split(';').slice(1)) {
      if (!part.startsWith(`${plan.name}=`)) return UNREAD;
      items.push(part.slice(plan.name.length + 1));
    }
    return raw.startsWith(`${named}=`) ? items : UNREAD;
  }
  if (!raw.startsWith(`${named}=`)) return UNREAD;
  const text = raw.slice(named.length + 1);
  if (plan.isArray) return text.split(',');
  return plan.isObject ? pairsOf(text.split(',')) : text;
}

/**
 * A `label` path value: `.5`, `.` (empty), arrays `.1.2` (exploded too), objects `.R.100.G.200`
 * (exploded `.R=100.G=200`). OpenAPI 3.0's table writes an unexploded list with dots, RFC 6570
 * (and later OpenAPI versions) with commas (`.1,2`): an unexploded value with a comma is split at
 * commas.
 */
function labelValue(plan: ParamPlan, raw: string): unknown {
  if (!raw.startsWith('.')) return UNREAD;
  const text = raw.slice(1);
  if (!plan.isArray && !plan.isObject) return text;
  if (text === '') return plan.isArray ? [] : Object.create(null);
  const parts = text.split(!plan.explode && text.includes(',') ? ',' : '.');
  if (plan.isArray) return parts;
  return plan.explode ? assignmentsOf(parts) : pairsOf(parts);
}

/** A path value as its style writes it (`simple`, `label` or `matrix`). */
function pathValue(plan: ParamPlan | undefined, raw: string): unknown {
  if (plan?.style === 'matrix') return matrixValue(plan, raw);
  if (plan?.style === 'label') return labelValue(plan, raw);
  return simpleValue(plan, raw);
}

/** How a path parameter's style writes it, for a violation: `;x=…`, `.…`. */
export function styleShape(plan: ParamPlan): string {
  return plan.style === 'matrix' ? `;${plan.name}=…` : '.…';
}

/** What a request gives parameters: its path under `/mock`, its URL (the query) and its headers. */
export interface ParamSource {
  mockPath: string;
  url: string;
  headers: IncomingHttpHeaders;
}

/**
 * The values of the parameters at `place` of `input`, by name (lower case for headers).
 * `pathParams` is `operation.pathNames`' parameters in order; `routeValues` gives the endpoint's
 * own path values when the request path is not the description's. A `matrix` or `label` path
 * value without its style's start (`/d/5` for `;x=5`) is left out and its name pushed to `unread`.
 */
export function collectParams(
  place: ParamPlace,
  operation: Operation,
  params: readonly ParamPlan[],
  pathParams: ReadonlyArray<ParamPlan | undefined>,
  input: ParamSource,
  routeValues: ((mockPath: string) => string[]) | undefined,
  unread?: string[],
): Record<string, unknown> {
  const data = Object.create(null) as Record<string, unknown>;
  if (place === 'path') {
    // The description's path (under its server's base path), else the endpoint's own segments in order.
    const match = operation.pathPattern.exec(input.mockPath);
    const values = match === null ? routeValues?.(input.mockPath) : undefined;
    if (match === null && values === undefined) return data;
    operation.pathNames.forEach((name, i) => {
      let raw = match === null ? values?.[i] : (match[i + 1] as string);
      if (raw === undefined) return;
      if (match !== null) {
        try {
          raw = decodeURIComponent(raw);
        } catch {
          // kept as sent
        }
      }
      const value = pathValue(pathParams[i], raw);
      if (value !== UNREAD) data[name] = strictNumbers(pathParams[i], value);
      else unread?.push(name);
    });
    return data;
  }
  if (place === 'query') {
    const query = readQuery(input.url);
    for (const plan of params) {
      const value = queryValue(plan, query);
      if (value !== undefined) data[plan.name] = strictNumbers(plan, value);
    }
    return data;
  }
  if (place === 'header') {
    for (const plan of params) {
      const value = Object.hasOwn(input.headers, plan.key) ? input.headers[plan.key] : undefined;
      if (value !== undefined)
        data[plan.key] = strictNumbers(plan, headerValue(plan, Array.isArray(value) ? value.join(', ') : value));
    }
    return data;
  }
  const header = input.headers.cookie;
  const cookies = parseCookies(Array.isArray(header) ? header.join('; ') : header);
  for (const plan of params) {
    const value = cookies[plan.name];
    if (value !== undefined) data[plan.name] = strictNumbers(plan, simpleValue(plan, value));
  }
  return data;
}
