import { routeParamNames } from '../route-path.js';
import { findSecretShapes } from '../redact/secret-shapes.js';
import type { AnswerContext } from './answers.js';
import { deref, isObject, type Json, type JsonObject } from '../description/json-pointer.js';
import { sampleBody } from './sample.js';

/**
 * The `verify:` example an import writes on an endpoint, for `mockapi verify`: a value for each
 * path parameter, each required query parameter and each required header parameter (the
 * parameter's example, else its schema's example, default or first enum value, else a value
 * generated from the schema), and the status of the endpoint's default answer as `expect`. A value
 * with the shape of a secret is never written.
 */

/** Header parameters never written into an example: credentials go through `upstream.auth`. */
const CREDENTIAL_HEADERS = /^(authorization|proxy-authorization|x-api-key|api-key|cookie|accept|content-type)$/i;

type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** A parameter's example value: its own, its schema's, or one generated from the schema. */
function valueOf(ctx: AnswerContext, param: JsonObject): Json | undefined {
  if (param.example !== undefined) return param.example;
  const examples = deref(ctx.doc, param.examples);
  if (isObject(examples)) {
    for (const raw of Object.values(examples)) {
      const example = deref(ctx.doc, raw);
      if (isObject(example) && example.value !== undefined) return example.value;
    }
  }
  const schema = deref(ctx.doc, param.schema);
  if (!isObject(schema)) return undefined;
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  try {
    return sampleBody(ctx.sampler, ctx.expand, schema);
  } catch {
    return undefined;
  }
}

/** A value fit for an example: scalars (lists of them for a query), never one shaped like a secret. */
function written(value: Json | undefined, list: boolean): Scalar | Scalar[] | undefined {
  const ok = (v: unknown): v is Scalar => isScalar(v) && findSecretShapes(String(v)).length === 0;
  if (ok(value)) return typeof value === 'boolean' ? String(value) : value;
  if (list && Array.isArray(value) && value.length > 0 && value.every(ok))
    return value.map((v) => (typeof v === 'boolean' ? String(v) : v));
  return undefined;
}

/** The parameters of an operation: its path item's, overridden by its own (same name and place). */
function parametersOf(ctx: AnswerContext, item: JsonObject, operation: JsonObject): JsonObject[] {
  const byKey = new Map<string, JsonObject>();
  for (const list of [item.parameters, operation.parameters]) {
    const params = deref(ctx.doc, list);
    if (!Array.isArray(params)) continue;
    for (const raw of params) {
      const param = deref(ctx.doc, raw);
      if (isObject(param) && typeof param.name === 'string' && typeof param.in === 'string')
        byKey.set(`${param.in} ${param.name}`, param);
    }
  }
  return [...byKey.values()];
}

/**
 * The example of an operation imported as the endpoint at `route` (`/pets/:petId`); `paramName` is
 * how the import names a path parameter in a route. Every parameter of the route gets a value
 * (`1` when the description does not declare it).
 */
export function importedVerify(
  ctx: AnswerContext,
  item: JsonObject,
  operation: JsonObject,
  route: string,
  paramName: (name: string) => string,
  status: number,
): Record<string, unknown> {
  const names = (routeParamNames(route) ?? []).filter((n) => n !== '*');
  const params: Record<string, Scalar> = {};
  const query: Record<string, Scalar | Scalar[]> = {};
  const headers: Record<string, string> = {};
  for (const param of parametersOf(ctx, item, operation)) {
    const name = param.name as string;
    if (param.in === 'path' && names.includes(paramName(name))) {
      const value = written(valueOf(ctx, param), false);
      if (value !== undefined) params[paramName(name)] = value as Scalar;
    } else if (param.required === true && param.in === 'query') {
      const value = written(valueOf(ctx, param), true);
      if (value !== undefined) query[name] = value;
    } else if (param.required === true && param.in === 'header' && !CREDENTIAL_HEADERS.test(name)) {
      const value = written(valueOf(ctx, param), false);
      if (value !== undefined && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) headers[name] = String(value);
    }
  }
  for (const name of names) params[name] ??= '1';
  const request: Record<string, unknown> = {};
  if (Object.keys(params).length > 0) request.params = params;
  if (Object.keys(query).length > 0) request.query = query;
  if (Object.keys(headers).length > 0) request.headers = headers;
  return Object.keys(request).length > 0 ? { request, expect: status } : { expect: status };
}
