import type { IncomingHttpHeaders } from 'node:http';
import { parseCookies } from '../answer/request-context.js';
import type { Operation } from '../description/description.js';
import { assign } from '../http/form-body.js';
import { strictByGuide, strictNumberText } from './number-text.js';
import type { ParamPlace, ParamPlan } from './param-plan.js';
import { pathValue, simpleValue, UNREAD } from './path-values.js';

/**
 * Reading an operation's path, query, header and cookie parameters out of a request, as their
 * `style` and `explode` write them. What a parameter's schema says about reading it (its types,
 * style, delimiter, the properties of an exploded object) is worked out once per operation, when
 * it is first validated (param-plan.ts): a request pays only for reading its own values. The path
 * styles (`label`, `matrix`) are read in path-values.ts.
 */

/** `value` (a parameter's text, a list of them, or the object a spread parameter reads) with text no number schema should take replaced by {@link NOT_A_NUMBER}. */
function strictNumbers(plan: ParamPlan | undefined, value: unknown): unknown {
  if (plan === undefined) return value;
  if (plan.spread) return strictByGuide(plan.memberNumbers, value);
  if (Array.isArray(value))
    return plan.itemNumberText === undefined ? value : value.map((v) => strictNumberText(v, plan.itemNumberText));
  return strictNumberText(value, plan.numberText);
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

/** A header's value: arrays split at commas, with the spaces HTTP allows around them (`1, 2`). */
function headerValue(plan: ParamPlan, raw: string): unknown {
  return plan.isArray ? raw.trim().split(/[ \t]*,[ \t]*/) : raw;
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
  if (place === 'path') collectPath(data, operation, pathParams, input.mockPath, routeValues, unread);
  else if (place === 'query') collectQuery(data, params, input.url);
  else if (place === 'header') collectHeaders(data, params, input.headers);
  else collectCookies(data, params, input.headers);
  return data;
}

/** The path parameters into `data`: the description's path (under its server's base path), else the endpoint's own segments in order. */
function collectPath(
  data: Record<string, unknown>,
  operation: Operation,
  pathParams: ReadonlyArray<ParamPlan | undefined>,
  mockPath: string,
  routeValues: ((mockPath: string) => string[]) | undefined,
  unread: string[] | undefined,
): void {
  const match = operation.pathPattern.exec(mockPath);
  const values = match === null ? routeValues?.(mockPath) : undefined;
  if (match === null && values === undefined) return;
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
}

function collectQuery(data: Record<string, unknown>, params: readonly ParamPlan[], url: string): void {
  const query = readQuery(url);
  for (const plan of params) {
    const value = queryValue(plan, query);
    if (value !== undefined) data[plan.name] = strictNumbers(plan, value);
  }
}

function collectHeaders(
  data: Record<string, unknown>,
  params: readonly ParamPlan[],
  headers: IncomingHttpHeaders,
): void {
  for (const plan of params) {
    const value = Object.hasOwn(headers, plan.key) ? headers[plan.key] : undefined;
    if (value !== undefined)
      data[plan.key] = strictNumbers(plan, headerValue(plan, Array.isArray(value) ? value.join(', ') : value));
  }
}

function collectCookies(
  data: Record<string, unknown>,
  params: readonly ParamPlan[],
  headers: IncomingHttpHeaders,
): void {
  const header = headers.cookie;
  const cookies = parseCookies(Array.isArray(header) ? header.join('; ') : header);
  for (const plan of params) {
    const value = cookies[plan.name];
    if (value !== undefined) data[plan.name] = strictNumbers(plan, simpleValue(plan, value));
  }
}
