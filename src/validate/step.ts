import type { IncomingHttpHeaders } from 'node:http';
import { relative } from 'node:path';
import { compileLeaf, type CompiledLeaf, type RenderedAnswer } from '../answer/leaf.js';
import { createAnswerRandom } from '../seeded.js';
import { compileParamReader, parseQuery } from '../answer/request-context.js';
import { routeParamNames } from '../config/route-path.js';
import type { RequestContext } from '../answer/context.js';
import type { Config, EndpointConfig, ValidateMode } from '../config/types.js';
import { isObject, type Json } from '../openapi/json-pointer.js';
import { encodeToken, locate } from './pointers.js';
import { loadDescription, normalizeMarker, operationFor, type Description, type Operation } from './description.js';
import { operationCheck, type RequestInput } from './request.js';
import { schemaSet, type SchemaSet } from './schemas.js';
import type { Violation } from './violations.js';

/**
 * The "validate" step of the request path: after auth, limits and match, before delay and fail
 * rate. An endpoint with an operation checks the request against it; `report` adds
 * `X-Mockapi-Violations` to the usual answer, `enforce` answers in place of the endpoint.
 */

const PROBLEM_TYPE = 'application/problem+json';

/** An endpoint's validation, compiled with the config. */
export interface EndpointValidation {
  mode: Exclude<ValidateMode, 'off'>;
  /** The request's violations ([] when none). */
  check(input: RequestInput): Violation[];
  /** The answer `enforce` gives a request with these violations. */
  answer(violations: Violation[], request: { url: string; headers: IncomingHttpHeaders; body: unknown; now: number }): RenderedAnswer;
}

function jsonAnswer(status: number, body: unknown, contentType: string): RenderedAnswer {
  const text = JSON.stringify(body);
  return { status, headers: ['content-type', contentType, 'content-length', String(Buffer.byteLength(text))], body: text };
}

/** The operation's own 400 (else 422) JSON example, when it has one. */
function ownExample(description: Description, operation: Operation): RenderedAnswer | undefined {
  const { doc } = description;
  for (const status of ['400', '422']) {
    if (operation.responses[status] === undefined) continue;
    const response = locate(doc, `${operation.pointer}/responses/${status}`)?.node;
    if (!isObject(response) || !isObject(response.content)) continue;
    for (const [type, media] of Object.entries(response.content)) {
      if (!/[/+]json\s*(;|$)/i.test(type) || !isObject(media)) continue;
      let example: Json | undefined = media.example;
      if (example === undefined && isObject(media.examples)) {
        const name = Object.keys(media.examples)[0];
        const first = name === undefined ? undefined : locate(doc, `${operation.pointer}/responses/${status}/content/${encodeToken(type)}/examples/${encodeToken(name)}`)?.node;
        if (isObject(first)) example = first.value;
      }
      if (isObject(example) && typeof example.$ref === 'string') example = locate(doc, example.$ref)?.node;
      if (example !== undefined) return jsonAnswer(Number(status), example, type.includes(';') ? type : `${type}; charset=utf-8`);
    }
  }
  return undefined;
}

/**
 * The default answer of `enforce`: 422 problem details listing the violations, with a `message`
 * naming the first (SDKs that show an error's `message`, as Octokit does, show the problem).
 */
function problemAnswer(violations: Violation[]): RenderedAnswer {
  const count = violations.length;
  const first = violations[0]?.message ?? 'the request does not match the API description';
  const message = count > 1 ? `${first} (and ${count - 1} more)` : first;
  return jsonAnswer(422, { type: 'about:blank', title: 'The request does not match the API description', status: 422, detail: `${count} violation${count === 1 ? '' : 's'} of the OpenAPI description`, message, violations }, PROBLEM_TYPE);
}

function contextOf(violations: Violation[], request: { url: string; headers: IncomingHttpHeaders; body: unknown; now: number }): RequestContext {
  const at = request.url.indexOf('?');
  return {
    params: {},
    query: at === -1 ? {} : parseQuery(request.url.slice(at + 1)),
    headers: request.headers,
    cookies: {},
    body: request.body,
    request: 0,
    state: {},
    now: request.now,
    random: createAnswerRandom(0, 'openapi.validate.answer', 0),
    violations,
  };
}

/** What the config's description gives each endpoint: its validation, or nothing. */
export interface ValidationPlan {
  description: Description;
  /** By endpoint index; undefined where an endpoint is not validated. */
  endpoints: Array<EndpointValidation | undefined>;
}

/** What every endpoint's validation of one config shares: the description, its schemas, the answer template. */
interface Shared {
  openapi: NonNullable<Config['openapi']>;
  description: Description;
  set: SchemaSet;
  template: CompiledLeaf | undefined;
}

async function prepare(openapi: NonNullable<Config['openapi']>): Promise<Shared> {
  const read = await loadDescription(openapi.spec);
  if (!read.ok) throw new Error(read.message);
  const { description } = read;
  // ajv loads with the first schema compiled (a request's), not at start.
  const set = schemaSet(description);
  let template: CompiledLeaf | undefined;
  if (openapi.answer !== undefined) template = await compileLeaf(openapi.answer, 'openapi.validate.answer', { env: process.env, allowViolations: true });
  return { openapi, description, set, template };
}

/** An endpoint's validation; undefined when it is not validated. Throws when it names an operation the description lacks. */
function validationOf(shared: Shared, endpoint: EndpointConfig): EndpointValidation | undefined {
  const { openapi, description, set, template } = shared;
  // An endpoint imported from another description (`openapiSpec`) names an operation of that one: not validated.
  if (endpoint.openapiSpec !== undefined && endpoint.openapiSpec !== openapi.spec) return undefined;
  return endpointValidation(description, set, endpoint, endpoint.validate ?? openapi.requests, template);
}

/**
 * Reads the description of `config.openapi` (through the guarded reader) and makes each
 * endpoint's validation. Rejects with the reason when the description cannot be read or an
 * endpoint names an operation it lacks (the config rules report both first, with positions).
 */
export async function planValidation(config: Config): Promise<ValidationPlan | undefined> {
  if (config.openapi === undefined) return undefined;
  const shared = await prepare(config.openapi);
  return { description: shared.description, endpoints: config.endpoints.map((endpoint) => validationOf(shared, endpoint)) };
}

/**
 * The validation of one endpoint served within `config` (a run-time stub): as a config endpoint's,
 * sharing the description read and the schemas compiled for the config. `problem` says why it
 * cannot be made: the endpoint names an operation the description lacks, or the description
 * cannot be read.
 */
export async function validationFor(config: Config, endpoint: EndpointConfig): Promise<{ validation: EndpointValidation | undefined } | { problem: string; field: 'openapi' | undefined }> {
  if (config.openapi === undefined) return { validation: undefined };
  let shared: Shared;
  try {
    shared = await prepare(config.openapi);
  } catch (err) {
    return { problem: `cannot be validated: ${(err as Error).message}`, field: undefined };
  }
  if (endpoint.openapi !== undefined && (endpoint.openapiSpec === undefined || endpoint.openapiSpec === config.openapi.spec)) {
    const key = normalizeMarker(endpoint.openapi);
    if (!shared.description.operations.has(key)) return { problem: `names an operation that ${relative(config.dir, config.openapi.spec) || config.openapi.spec} does not have: ${key}`, field: 'openapi' };
  }
  return { validation: validationOf(shared, endpoint) };
}

function endpointValidation(description: Description, set: SchemaSet, endpoint: EndpointConfig, mode: ValidateMode, template: CompiledLeaf | undefined): EndpointValidation | undefined {
  if (mode === 'off') return undefined;
  const operation = operationFor(description, endpoint.method, endpoint.path, endpoint.openapi);
  if (operation === undefined) {
    if (endpoint.openapi !== undefined) throw new Error(`${endpoint.method} ${endpoint.path}: the description has no operation ${endpoint.openapi}`);
    return undefined;
  }
  let fallback: RenderedAnswer | undefined | null = null;
  const readParams = compileParamReader(endpoint.path);
  // In path order: a parameter beside text (`/:name.json/:version`) is read after the others.
  const names = routeParamNames(endpoint.path) ?? [];
  return {
    mode,
    check: operationCheck(description, set, operation, (mockPath) => valuesInOrder(readParams(mockPath), names)),
    answer(violations, request) {
      if (template !== undefined) return template.render(contextOf(violations, request));
      if (fallback === null) fallback = ownExample(description, operation);
      return fallback ?? problemAnswer(violations);
    },
  };
}

/** The values of `params` in the order of `names` (a name the path did not give reads as empty). */
function valuesInOrder(params: Record<string, string>, names: readonly string[]): string[] {
  return names.filter((name) => name !== '*').map((name) => params[name] ?? '');
}
