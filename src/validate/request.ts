import type { IncomingHttpHeaders } from 'node:http';
import { isObject, type JsonObject } from '../openapi/json-pointer.js';
import { bodyRules, checkBody, mediaPointer, type BodyRules } from './body.js';
import type { Description, Operation } from './description.js';
import { collectParams, planParam, type ParamPlace, type ParamPlan } from './params.js';
import type { AjvError, SchemaCheck, SchemaSet } from './schemas.js';
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
}

/** The values of the endpoint's own `:name` segments of a request path, in order (decoded): the path parameters when the request path is not the description's. */
export type RouteValues = (mockPath: string) => string[];

const PARAM_PLACES: readonly ParamPlace[] = ['path', 'query', 'header', 'cookie'];
/** Headers OpenAPI says a description's header parameters never describe. */
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

interface CompiledPlace {
  place: ParamPlace;
  params: ParamPlan[];
  check: SchemaCheck;
}

/** An operation made ready to check requests: worked out and compiled the first time one is checked. */
interface CompiledOperation {
  /** The places that have parameters, in order. */
  places: CompiledPlace[];
  /** The path parameter plan of each of `operation.pathNames`. */
  pathParams: Array<ParamPlan | undefined>;
  body: BodyRules | undefined;
}

const compiledOps = new WeakMap<Operation, CompiledOperation>();

function compileOperation(doc: JsonObject, set: SchemaSet, operation: Operation): CompiledOperation {
  const places: CompiledPlace[] = [];
  let pathParams: Array<ParamPlan | undefined> = [];
  for (const place of PARAM_PLACES) {
    const found = operation.parameters.filter(({ param }) => param.in === place && !(place === 'header' && IGNORED_HEADERS.has(String(param.name).toLowerCase())));
    if (found.length === 0) continue;
    const key = (p: JsonObject): string => (place === 'header' ? String(p.name).toLowerCase() : String(p.name));
    const withSchema = found.filter(({ param }) => param.schema !== undefined);
    const properties = Object.fromEntries(withSchema.map(({ param, pointer }) => [key(param), `${pointer}/schema`]));
    const required = found.filter(({ param }) => param.required === true || place === 'path').map(({ param }) => key(param));
    const params = found.map(({ param }) => planParam(doc, place, param));
    if (place === 'path') pathParams = operation.pathNames.map((name) => params.find((p) => p.name === name));
    places.push({ place, params, check: set.compileParams(properties, required) });
  }
  return { places, pathParams, body: bodyRules(operation) };
}

function compiledFor(doc: JsonObject, set: SchemaSet, operation: Operation): CompiledOperation {
  let compiled = compiledOps.get(operation);
  if (compiled === undefined) compiledOps.set(operation, (compiled = compileOperation(doc, set, operation)));
  return compiled;
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

/** Every way `input` breaks `operation`, sorted; [] when it follows the description. */
export function validateRequest(description: Description, set: SchemaSet, operation: Operation, input: RequestInput, routeValues?: RouteValues): Violation[] {
  return checkCompiled(compiledFor(description.doc, set, operation), set, operation, input, routeValues);
}

/**
 * The check of requests against `operation`: {@link validateRequest} with the operation's
 * compiled form kept in the closure (worked out on the first request checked).
 */
export function operationCheck(description: Description, set: SchemaSet, operation: Operation, routeValues?: RouteValues): (input: RequestInput) => Violation[] {
  let compiled: CompiledOperation | undefined;
  return (input) => checkCompiled((compiled ??= compiledFor(description.doc, set, operation)), set, operation, input, routeValues);
}

function checkCompiled(compiled: CompiledOperation, set: SchemaSet, operation: Operation, input: RequestInput, routeValues: RouteValues | undefined): Violation[] {
  const out: Violation[] = [];
  for (const { place, params, check } of compiled.places) {
    const data = collectParams(place, operation, params, compiled.pathParams, input, routeValues);
    if (!check(data)) for (const error of check.errors ?? []) out.push(toViolation(place, error));
  }
  if (compiled.body !== undefined) {
    const failed = checkBody(set, compiled.body, input, out);
    if (failed !== undefined) for (const error of failed.errors ?? []) out.push(toViolation('body', error));
  }
  return out.length === 0 ? out : sortViolations(out);
}

/** Compiles every schema of every operation (parameters and request bodies); the problems found, one per operation. */
export function compileAll(description: Description, set: SchemaSet): string[] {
  const problems: string[] = [];
  for (const operation of description.operations.values()) {
    try {
      compiledFor(description.doc, set, operation);
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
