import type { IncomingHttpHeaders } from 'node:http';
import { isObject, type JsonObject } from '../description/json-pointer.js';
import { bodyRules, checkBody, mediaPointer, type BodyRules } from './body.js';
import type { Description, Operation } from '../description/description.js';
import { collectParams, planParam, styleShape, type ParamPlace, type ParamPlan } from './params.js';
import type { AjvError, SchemaCheck, SchemaSet } from './schemas.js';
import { paramOf, pointerSegment, sortViolations, type Violation, type ViolationPlace } from './violations.js';
import { locate } from '../description/pointers.js';

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

/** A parameter whose schema is a choice of alternatives, checked one alternative at a time (see ParamPlan.branches). */
interface Alternatives {
  plan: ParamPlan;
  /** Each alternative's check over `{ <key>: value }`, as that alternative reads the value. */
  branches: Array<{ plan: ParamPlan; check: SchemaCheck }>;
  /** The whole schema over `{ <key>: value }` (required included): its errors when no alternative holds. */
  whole: SchemaCheck;
}

/**
 * A parameter described by `content` rather than `schema`: its value read as its media type says
 * (JSON for `application/json` and `+json` types, else the text) and checked against that schema.
 */
interface ContentParam {
  plan: ParamPlan;
  /** Its value is JSON text. */
  json: boolean;
  /** The media type's schema, over the value read (not coerced: JSON says what it is). */
  check: SchemaCheck;
}

interface CompiledPlace {
  place: ParamPlace;
  /** The parameters read into one object for `checks`. */
  params: ParamPlan[];
  /** The checks of that object: one for all of them, or one per parameter when one schema could not be compiled. */
  checks: SchemaCheck[];
  alternatives: Alternatives[];
  /** The parameters described by `content`, read with the others, each checked on its own. */
  contents: ContentParam[];
}

/** A part of an operation whose schema ajv cannot compile: it is not checked, the other parts are. */
export interface CompileProblem {
  /** `query parameter cwes`, `request body (application/json)`. */
  part: string;
  /** The canonical pointer of its schema in the description. */
  pointer: string;
  message: string;
}

/** An operation made ready to check requests: worked out and compiled the first time one is checked. */
interface CompiledOperation {
  /** The places that have parameters, in order. */
  places: CompiledPlace[];
  /** The path parameter plan of each of `operation.pathNames`. */
  pathParams: Array<ParamPlan | undefined>;
  body: BodyRules | undefined;
  /** The parts left unchecked because their schema could not be compiled. */
  problems: CompileProblem[];
}

const compiledOps = new WeakMap<Operation, CompiledOperation>();

const PLACE_LABEL: Record<ViolationPlace, string> = {
  path: 'path parameter',
  query: 'query parameter',
  header: 'header',
  cookie: 'cookie',
  body: 'body field',
};

/** Compiles `make()`; on failure records the problem (with the part and its schema's pointer) and gives undefined. */
function attempt(
  make: () => SchemaCheck,
  part: string,
  pointer: string,
  problems: CompileProblem[],
): SchemaCheck | undefined {
  try {
    return make();
  } catch (err) {
    problems.push({ part, pointer, message: (err as Error).message });
    return undefined;
  }
}

/**
 * The checks of one place's parameters: one object schema for all of them; when it cannot be
 * compiled, one per parameter, so that one broken schema leaves the others checked.
 */
function placeChecks(
  set: SchemaSet,
  place: ParamPlace,
  params: Array<{ plan: ParamPlan; pointer: string; required: boolean }>,
  problems: CompileProblem[],
): SchemaCheck[] {
  if (params.length === 0) return [];
  const properties = Object.fromEntries(params.map(({ plan, pointer }) => [plan.key, pointer]));
  const required = params.filter((p) => p.required).map((p) => p.plan.key);
  const all = attempt(() => set.compileParams(properties, required), '', '', []);
  if (all !== undefined) return [all];
  return params.flatMap(({ plan, pointer, required: isRequired }) => {
    const one = attempt(
      () => set.compileParams({ [plan.key]: pointer }, isRequired ? [plan.key] : []),
      `${PLACE_LABEL[place]} ${plan.name}`,
      pointer,
      problems,
    );
    return one === undefined ? [] : [one];
  });
}

/** `application/json`, `application/problem+json`: a parameter value of such a type is JSON text. */
const JSON_MEDIA = /^[^;]*[/+]json\s*(;|$)/i;

/** The media type of a parameter described by `content` (OpenAPI allows one), when it has a schema. */
function mediaOf(param: JsonObject): string | undefined {
  if (!isObject(param.content)) return undefined;
  const found = Object.entries(param.content).find(([, media]) => isObject(media) && media.schema !== undefined);
  return found?.[0];
}

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

function compileOperation(doc: JsonObject, set: SchemaSet, operation: Operation): CompiledOperation {
  const places: CompiledPlace[] = [];
  const problems: CompileProblem[] = [];
  let pathParams: Array<ParamPlan | undefined> = [];
  for (const place of PARAM_PLACES) {
    const found = operation.parameters.filter(
      ({ param }) =>
        param.in === place && !(place === 'header' && IGNORED_HEADERS.has(String(param.name).toLowerCase())),
    );
    if (found.length === 0) continue;
    const planned = found.map(({ param, pointer }) => {
      const at = (rest: string): string => locate(doc, `${pointer}/${rest}`)?.pointer ?? `${pointer}/${rest}`;
      const media = param.schema === undefined ? mediaOf(param) : undefined;
      return {
        plan: planParam(doc, place, param, param.schema === undefined ? undefined : at('schema')),
        pointer: param.schema === undefined ? undefined : at('schema'),
        required: param.required === true || place === 'path',
        content:
          media === undefined
            ? undefined
            : { pointer: at(`content/${pointerSegment(media)}/schema`), json: JSON_MEDIA.test(media) },
      };
    });
    const params = planned.map((p) => p.plan);
    if (place === 'path') pathParams = operation.pathNames.map((name) => params.find((p) => p.name === name));
    const contents = planned.flatMap(({ plan, content }) => {
      if (content === undefined) return [];
      const part = `${PLACE_LABEL[place]} ${plan.name}`;
      const check = attempt(() => set.compileAt(content.pointer, false), part, content.pointer, problems);
      return check === undefined ? [] : [{ plan, json: content.json, check }];
    });
    // A parameter without a schema (one described by `content` too) is checked here for being there.
    const plain = planned.filter((p) => p.plan.branches === undefined).map((p) => ({ ...p, pointer: p.pointer ?? '' }));
    const checks = placeChecks(
      set,
      place,
      plain.filter((p) => p.pointer !== ''),
      problems,
    );
    const presence = plain.filter((p) => p.pointer === '' && p.required).map((p) => p.plan.key);
    if (presence.length > 0) checks.push(set.compileParams({}, presence));
    const alternatives: Alternatives[] = [];
    for (const { plan, pointer, required } of planned) {
      if (plan.branches === undefined || pointer === undefined) continue;
      const part = `${PLACE_LABEL[place]} ${plan.name}`;
      const whole = attempt(
        () => set.compileParams({ [plan.key]: pointer }, required ? [plan.key] : []),
        part,
        pointer,
        problems,
      );
      const branches = plan.branches.flatMap((branch) => {
        const check = attempt(() => set.compileParams({ [plan.key]: branch.pointer }, []), part, branch.pointer, []);
        return check === undefined ? [] : [{ plan: branch.plan, check }];
      });
      if (whole !== undefined) alternatives.push({ plan, branches, whole });
    }
    places.push({ place, params: plain.map((p) => p.plan), checks, alternatives, contents });
  }
  return { places, pathParams, body: bodyRules(operation, doc), problems };
}

function compiledFor(doc: JsonObject, set: SchemaSet, operation: Operation): CompiledOperation {
  let compiled = compiledOps.get(operation);
  if (compiled === undefined) compiledOps.set(operation, (compiled = compileOperation(doc, set, operation)));
  return compiled;
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

/**
 * Compiles every schema of every operation (parameters and request bodies): the parts that cannot
 * be compiled, each with its operation. Those parts are not checked; the others are.
 */
export function compileAll(description: Description, set: SchemaSet): Array<CompileProblem & { operation: string }> {
  const problems: Array<CompileProblem & { operation: string }> = [];
  for (const operation of description.operations.values()) {
    const compiled = compiledFor(description.doc, set, operation);
    for (const problem of compiled.problems) problems.push({ ...problem, operation: operation.key });
    const content = operation.requestBody?.content;
    if (!isObject(content) || operation.requestBodyPointer === undefined) continue;
    for (const [type, media] of Object.entries(content)) {
      if (!isObject(media) || media.schema === undefined) continue;
      const pointer = `${mediaPointer(operation.requestBodyPointer, type)}/schema`;
      try {
        set.compileAt(pointer, !/[/+]json\s*(;|$)/i.test(type));
      } catch (err) {
        problems.push({
          operation: operation.key,
          part: `request body (${type})`,
          pointer,
          message: (err as Error).message,
        });
      }
    }
  }
  return problems;
}
