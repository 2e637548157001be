/**
 * Checking a request against its operation in the description: its path, query, header and
 * cookie parameters read as their styles say and checked against their schemas, `content`
 * parameters parsed and checked, alternatives tried one at a time, then the body — every
 * violation found, sorted. The operation's checks are compiled on first use (compile-operation.ts).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { checkBody } from './body.js';
import type { Description, Operation } from '../description/description.js';
import { collectParams } from './params.js';
import { styleShape, type ParamPlace } from './param-plan.js';
import type { AjvError, SchemaCheck, SchemaSet } from './schemas.js';
import {
  paramOf,
  PLACE_LABEL,
  pointerSegment,
  sortViolations,
  type Violation,
  type ViolationPlace,
} from './violations.js';
import { compiledFor, type Alternatives, type CompiledOperation, type ContentParam } from './compile-operation.js';

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

/** The violations of a `content` parameter's value (`raw`, as sent), pushed to `out`. */
function checkContent(place: ParamPlace, { plan, json, check }: ContentParam, raw: unknown, out: Violation[]): void {
  if (typeof raw !== 'string') return;
  const at = `/${pointerSegment(plan.key)}`;
  let value: unknown = raw;
  if (json) {
    try {
      value = JSON.parse(raw);
    } catch {
      const message = `${PLACE_LABEL[place]} ${plan.key} is not valid JSON`;
      out.push({ in: place, pointer: at, param: plan.key, keyword: 'parse', message });
      return;
    }
  }
  if (check(value)) return;
  for (const error of reported(check))
    out.push(toViolation(place, { ...error, instancePath: at + error.instancePath }));
}

/**
 * The errors of a failed check worth a violation: an `if` error only says the `else` that follows
 * failed (the `nullable` wrapper of adjust.ts is one), and that one's own errors say how.
 */
export function reported(check: SchemaCheck): AjvError[] {
  return (check.errors ?? []).filter((error) => error.keyword !== 'if');
}

/** An ajv error as a violation at `place`. */
function toViolation(place: ViolationPlace, error: AjvError): Violation {
  let pointer = error.instancePath;
  let keyword = error.keyword;
  let message = error.message ?? 'is invalid';
  const extra = error.params.missingProperty ?? error.params.additionalProperty ?? error.params.unevaluatedProperty;
  if (typeof extra === 'string') pointer += `/${pointerSegment(extra)}`;
  if (keyword === 'required') message = 'is required';
  else if (keyword === 'additionalProperties' || keyword === 'unevaluatedProperties') message = 'is not allowed';
  else if (keyword === 'enum' && Array.isArray(error.params.allowedValues))
    message = `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
  if (keyword === 'errorMessage') keyword = 'invalid';
  const param = paramOf(pointer);
  const label = param === null ? 'the body' : `${PLACE_LABEL[place]} ${param}`;
  return { in: place, pointer, param, keyword, message: `${label} ${message}` };
}

/** Every way `input` breaks `operation`, sorted; [] when it follows the description. */
export function validateRequest(
  description: Description,
  set: SchemaSet,
  operation: Operation,
  input: RequestInput,
  routeValues?: RouteValues,
): Violation[] {
  return checkCompiled(compiledFor(description.doc, set, operation), set, operation, input, routeValues, undefined);
}

/** The checks of one operation, compiled on first use. */
export interface OperationChecker {
  /**
   * The request's violations, sorted; [] when it follows the description. The parts of the
   * operation this request was not checked against (their schemas cannot be compiled: `query
   * parameter cwes`, `request body (application/json)`) are pushed to `unchecked`.
   */
  check(input: RequestInput, unchecked?: string[]): Violation[];
}

/**
 * The check of requests against `operation`: {@link validateRequest} with the operation's
 * compiled form kept in the closure (worked out on the first request checked).
 */
export function operationChecker(
  description: Description,
  set: SchemaSet,
  operation: Operation,
  routeValues?: RouteValues,
): OperationChecker {
  let compiled: CompiledOperation | undefined;
  return {
    check: (input, unchecked) =>
      checkCompiled(
        (compiled ??= compiledFor(description.doc, set, operation)),
        set,
        operation,
        input,
        routeValues,
        unchecked,
      ),
  };
}

/** {@link operationChecker}'s check alone. */
export function operationCheck(
  description: Description,
  set: SchemaSet,
  operation: Operation,
  routeValues?: RouteValues,
): (input: RequestInput) => Violation[] {
  const { check } = operationChecker(description, set, operation, routeValues);
  return (input) => check(input);
}

/** Whether one alternative of `alt` holds for the value the request gives (each read as that alternative reads it). */
function alternativeHolds(
  alt: Alternatives,
  place: ParamPlace,
  operation: Operation,
  compiled: CompiledOperation,
  input: RequestInput,
  routeValues: RouteValues | undefined,
): boolean {
  for (const branch of alt.branches) {
    const pathParams =
      place === 'path'
        ? compiled.pathParams.map((p) => (p?.name === alt.plan.name ? branch.plan : p))
        : compiled.pathParams;
    const data = collectParams(place, operation, [branch.plan], pathParams, input, routeValues);
    if (data[alt.plan.key] === undefined) return false; // absent: the whole schema says whether it must be there
    if (branch.check(data)) return true;
  }
  return false;
}

/**
 * The violations of `check` over the parameters `data` of `place`, pushed to `out`. A parameter
 * in `unread` (not written as its style says) is not reported missing: {@link pushUnread} says why.
 */
function checkParams(check: SchemaCheck, data: unknown, place: ParamPlace, unread: string[], out: Violation[]): void {
  if (check(data)) return;
  for (const error of reported(check))
    if (!(error.keyword === 'required' && unread.includes(String(error.params.missingProperty))))
      out.push(toViolation(place, error));
}

/** A `style` violation for each path parameter in `unread`: `/d/5` for a `matrix` `;x=5`. */
function pushUnread(compiled: CompiledOperation, unread: string[], out: Violation[]): void {
  for (const name of unread) {
    const plan = compiled.pathParams.find((p) => p?.name === name);
    if (plan === undefined) continue;
    const message = `path parameter ${name} must be written ${styleShape(plan)} (style ${plan.style})`;
    out.push({ in: 'path', pointer: `/${pointerSegment(name)}`, param: name, keyword: 'style', message });
  }
}

function checkCompiled(
  compiled: CompiledOperation,
  set: SchemaSet,
  operation: Operation,
  input: RequestInput,
  routeValues: RouteValues | undefined,
  unchecked: string[] | undefined,
): Violation[] {
  const out: Violation[] = [];
  if (unchecked !== undefined) for (const problem of compiled.problems) unchecked.push(problem.part);
  for (const { place, params, checks, alternatives, contents } of compiled.places) {
    if (checks.length > 0 || contents.length > 0) {
      const unread: string[] = [];
      const data = collectParams(place, operation, params, compiled.pathParams, input, routeValues, unread);
      for (const check of checks) checkParams(check, data, place, unread, out);
      for (const content of contents) checkContent(place, content, data[content.plan.key], out);
      pushUnread(compiled, unread, out);
    }
    for (const alt of alternatives) {
      if (alternativeHolds(alt, place, operation, compiled, input, routeValues)) continue;
      const unread: string[] = [];
      const data = collectParams(place, operation, [alt.plan], compiled.pathParams, input, routeValues, unread);
      checkParams(alt.whole, data, place, unread, out);
      pushUnread(compiled, unread, out);
    }
  }
  if (compiled.body !== undefined) {
    const failed = checkBody(set, compiled.body, input, out, unchecked);
    if (failed !== undefined) for (const error of reported(failed)) out.push(toViolation('body', error));
  }
  return out.length === 0 ? out : sortViolations(out);
}
