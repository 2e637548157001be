import type { IncomingHttpHeaders } from 'node:http';
import { relative } from 'node:path';
import type { RenderedAnswer } from '../answer/leaf.js';
import { createAnswerRandom } from '../seeded.js';
import { compileParamReader, parseQuery } from '../answer/request-context.js';
import { fileStamp } from '../file-stamp.js';
import { routeParamNames } from '../route-path.js';
import type { RequestContext } from '../expression/context.js';
import type { Config, EndpointConfig, ValidateMode } from '../config/types.js';
import { isObject, type Json } from '../description/json-pointer.js';
import { encodeToken, locate } from '../description/pointers.js';
import { normalizeMarker, operationFor, type Description, type Operation } from '../description/description.js';
import { descriptionReading, type DescriptionReading, type ReadOutcome } from './reading.js';
import { operationChecker, type OperationChecker, type RequestInput } from './request.js';
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
  /**
   * Undefined when requests can be checked now; else the read of the description, which the
   * request waits for (the first requests after `serve` starts, before the description was read).
   * Never rejects.
   */
  pending?(): Promise<unknown> | undefined;
  /**
   * The request's violations ([] when none); undefined when the request is not validated after all
   * (the description has no operation for the endpoint, or cannot be read). The parts of the
   * operation it was not checked against are pushed to `unchecked` (see {@link skipped}).
   */
  check(input: RequestInput, unchecked?: string[]): Violation[] | undefined;
  /** Why the endpoint's requests are not validated at all, for the journal; undefined when they are (or need not be). */
  skipped?(): string | undefined;
  /** False once it is known that no request is checked (no operation for the endpoint): its body need not be read as a value. */
  checks?(): boolean;
  /** The answer `enforce` gives a request with these violations. */
  answer(
    violations: Violation[],
    request: { url: string; headers: IncomingHttpHeaders; body: unknown; now: number },
  ): RenderedAnswer;
}

function jsonAnswer(status: number, body: unknown, contentType: string): RenderedAnswer {
  const text = JSON.stringify(body);
  return {
    status,
    headers: ['content-type', contentType, 'content-length', String(Buffer.byteLength(text))],
    body: text,
  };
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
        const first =
          name === undefined
            ? undefined
            : locate(
                doc,
                `${operation.pointer}/responses/${status}/content/${encodeToken(type)}/examples/${encodeToken(name)}`,
              )?.node;
        if (isObject(first)) example = first.value;
      }
      if (isObject(example) && typeof example.$ref === 'string') example = locate(doc, example.$ref)?.node;
      if (example !== undefined)
        return jsonAnswer(Number(status), example, type.includes(';') ? type : `${type}; charset=utf-8`);
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
  return jsonAnswer(
    422,
    {
      type: 'about:blank',
      title: 'The request does not match the API description',
      status: 422,
      detail: `${count} violation${count === 1 ? '' : 's'} of the OpenAPI description`,
      message,
      violations,
    },
    PROBLEM_TYPE,
  );
}

function contextOf(
  violations: Violation[],
  request: { url: string; headers: IncomingHttpHeaders; body: unknown; now: number },
): RequestContext {
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

declare module '../answer/parts.js' {
  interface EndpointParts {
    /** Request validation against the OpenAPI description (`openapi:`); undefined when none. */
    validation?: EndpointValidation;
  }
}

/** What the config's description gives each endpoint: its validation, or nothing. */
export interface ValidationPlan {
  /** The description's read, shared by every endpoint (and the stubs added to the config). */
  reading: DescriptionReading;
  /** The description file's stamp when the plan was made (see file-stamp.ts): a reload with another reads it again. */
  stamp: string;
  /** By endpoint index; undefined where an endpoint is not validated. */
  endpoints: Array<EndpointValidation | undefined>;
}

/** Whether `endpoint` is validated against `openapi.spec` (an endpoint imported from another description, `openapiSpec`, names an operation of that one). */
function validatedMode(
  openapi: NonNullable<Config['openapi']>,
  endpoint: EndpointConfig,
): EndpointValidation['mode'] | undefined {
  if (endpoint.openapiSpec !== undefined && endpoint.openapiSpec !== openapi.spec) return undefined;
  const mode = endpoint.validate ?? openapi.requests;
  return mode === 'off' ? undefined : mode;
}

/** The first endpoint validated against `config.openapi` whose `openapi:` names an operation `description` lacks. */
export function unknownOperation(config: Config, description: Description): EndpointConfig | undefined {
  const { openapi } = config;
  if (openapi === undefined) return undefined;
  return config.endpoints.find(
    (e) =>
      validatedMode(openapi, e) !== undefined &&
      e.openapi !== undefined &&
      !description.operations.has(normalizeMarker(e.openapi)),
  );
}

/**
 * Each endpoint's validation of `config.openapi`. `read: 'now'` reads the description first and
 * rejects with the reason when it cannot be read or an endpoint names an operation it lacks (the
 * config rules report both first, with positions); `later` reads nothing: the description is read
 * when first wanted ({@link DescriptionReading}), and until then a request that needs it waits.
 */
export async function planValidation(
  config: Config,
  read: 'now' | 'later' = 'now',
): Promise<ValidationPlan | undefined> {
  const { openapi } = config;
  if (openapi === undefined) return undefined;
  const reading = descriptionReading(openapi);
  const stamp = await fileStamp(openapi.spec);
  if (read === 'now') {
    const outcome = await reading.read();
    if (!outcome.ok) throw new Error(outcome.problem);
    const missing = unknownOperation(config, outcome.shared.description);
    if (missing !== undefined)
      throw new Error(`${missing.method} ${missing.path}: the description has no operation ${missing.openapi}`);
  }
  return {
    reading,
    stamp,
    endpoints: config.endpoints.map((endpoint) => lazyValidation(reading, endpoint, validatedMode(openapi, endpoint))),
  };
}

/**
 * The validation of one endpoint served within `config` (a run-time stub): as a config endpoint's,
 * sharing the description read and the schemas compiled for the config. `problem` says why it
 * cannot be made: the endpoint names an operation the description lacks, or the description
 * cannot be read.
 */
export async function validationFor(
  config: Config,
  endpoint: EndpointConfig,
): Promise<{ validation: EndpointValidation | undefined } | { problem: string; field: 'openapi' | undefined }> {
  const { openapi } = config;
  if (openapi === undefined) return { validation: undefined };
  const outcome = await descriptionReading(openapi).read();
  if (!outcome.ok) return { problem: `cannot be validated: ${outcome.problem}`, field: undefined };
  const mode = validatedMode(openapi, endpoint);
  if (endpoint.openapi !== undefined && (endpoint.openapiSpec === undefined || endpoint.openapiSpec === openapi.spec)) {
    const key = normalizeMarker(endpoint.openapi);
    if (!outcome.shared.description.operations.has(key))
      return {
        problem: `names an operation that ${relative(config.dir, openapi.spec) || openapi.spec} does not have: ${key}`,
        field: 'openapi',
      };
  }
  if (
    mode === undefined ||
    operationFor(outcome.shared.description, endpoint.method, endpoint.path, endpoint.openapi) === undefined
  )
    return { validation: undefined };
  return { validation: lazyValidation(descriptionReading(openapi), endpoint, mode) };
}

/** What an endpoint's validation is once the description is read: its checks, or why it has none. */
interface Made {
  check?: OperationChecker['check'];
  answer?: EndpointValidation['answer'];
  /** Why the endpoint is not validated, for the journal; undefined for an endpoint the description does not describe (no note: it was never meant to be). */
  skipped?: string;
}

function made(outcome: ReadOutcome, endpoint: EndpointConfig): Made {
  if (!outcome.ok) return { skipped: `not validated: the OpenAPI description cannot be read: ${outcome.problem}` };
  const { description, set, template } = outcome.shared;
  const operation = operationFor(description, endpoint.method, endpoint.path, endpoint.openapi);
  if (operation === undefined)
    return endpoint.openapi === undefined
      ? {}
      : { skipped: `not validated: the OpenAPI description has no operation ${normalizeMarker(endpoint.openapi)}` };
  const readParams = compileParamReader(endpoint.path);
  // In path order: a parameter beside text (`/:name.json/:version`) is read after the others.
  const names = routeParamNames(endpoint.path) ?? [];
  let fallback: RenderedAnswer | undefined | null = null;
  return {
    check: operationChecker(description, set, operation, (mockPath) => valuesInOrder(readParams(mockPath), names))
      .check,
    answer(violations, request) {
      if (template !== undefined) return template.render(contextOf(violations, request));
      if (fallback === null) fallback = ownExample(description, operation);
      return fallback ?? problemAnswer(violations);
    },
  };
}

/** An endpoint's validation against the description `reading` reads; undefined when `mode` is (not validated). */
function lazyValidation(
  reading: DescriptionReading,
  endpoint: EndpointConfig,
  mode: EndpointValidation['mode'] | undefined,
): EndpointValidation | undefined {
  if (mode === undefined) return undefined;
  let parts: Made | undefined;
  const ready = (): Made => (parts ??= made(reading.outcome as ReadOutcome, endpoint));
  return {
    mode,
    pending: () => (reading.outcome === undefined ? reading.read() : undefined),
    check: (input, unchecked) => ready().check?.(input, unchecked),
    skipped: () => ready().skipped,
    checks: () => reading.outcome === undefined || ready().check !== undefined,
    answer: (violations, request) => (ready().answer as EndpointValidation['answer'])(violations, request),
  };
}

/** The values of `params` in the order of `names` (a name the path did not give reads as empty). */
function valuesInOrder(params: Record<string, string>, names: readonly string[]): string[] {
  return names.filter((name) => name !== '*').map((name) => params[name] ?? '');
}
