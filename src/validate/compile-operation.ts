/**
 * An operation of the description made ready to check requests against: its parameters planned
 * place by place (path, query, header, cookie) and their schemas compiled — one check per place,
 * one per alternative of a `oneOf`/`anyOf` parameter, one per `content` parameter — with its body
 * rules. Worked out the first time a request to the operation is checked and kept per operation.
 * A schema ajv cannot compile is recorded as a {@link CompileProblem} and left unchecked; the
 * other parts are checked. The check itself is in request.ts.
 */
import { isObject, type JsonObject } from '../description/json-pointer.js';
import type { Description, Operation } from '../description/description.js';
import { locate } from '../description/pointers.js';
import { bodyRules, mediaPointer, type BodyRules } from './body.js';
import { planParam, type ParamPlace, type ParamPlan } from './param-plan.js';
import type { SchemaCheck, SchemaSet } from './schemas.js';
import { PLACE_LABEL, pointerSegment } from './violations.js';

const PARAM_PLACES: readonly ParamPlace[] = ['path', 'query', 'header', 'cookie'];
/** Headers OpenAPI says a description's header parameters never describe. */
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

/** A parameter whose schema is a choice of alternatives, checked one alternative at a time (see ParamPlan.branches). */
export interface Alternatives {
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
export interface ContentParam {
  plan: ParamPlan;
  /** Its value is JSON text. */
  json: boolean;
  /** The media type's schema, over the value read (not coerced: JSON says what it is). */
  check: SchemaCheck;
}

export interface CompiledPlace {
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
export interface CompiledOperation {
  /** The places that have parameters, in order. */
  places: CompiledPlace[];
  /** The path parameter plan of each of `operation.pathNames`. */
  pathParams: Array<ParamPlan | undefined>;
  body: BodyRules | undefined;
  /** The parts left unchecked because their schema could not be compiled. */
  problems: CompileProblem[];
}

/** One parameter of a place, planned: where its schema is, whether it must be there, its `content` if any. */
interface PlannedParam {
  plan: ParamPlan;
  /** Its schema's canonical pointer; undefined for a parameter described by `content`. */
  pointer: string | undefined;
  required: boolean;
  content: { pointer: string; json: boolean } | undefined;
}

const compiledOps = new WeakMap<Operation, CompiledOperation>();

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

function compileOperation(doc: JsonObject, set: SchemaSet, operation: Operation): CompiledOperation {
  const places: CompiledPlace[] = [];
  const problems: CompileProblem[] = [];
  let pathParams: Array<ParamPlan | undefined> = [];
  for (const place of PARAM_PLACES) {
    const planned = planPlace(doc, place, operation);
    if (planned.length === 0) continue;
    const params = planned.map((p) => p.plan);
    if (place === 'path') pathParams = operation.pathNames.map((name) => params.find((p) => p.name === name));
    places.push(compilePlace(set, place, planned, problems));
  }
  return { places, pathParams, body: bodyRules(operation, doc), problems };
}

/** The operation's parameters in `place`, planned (the headers OpenAPI leaves out skipped). */
function planPlace(doc: JsonObject, place: ParamPlace, operation: Operation): PlannedParam[] {
  const found = operation.parameters.filter(
    ({ param }) => param.in === place && !(place === 'header' && IGNORED_HEADERS.has(String(param.name).toLowerCase())),
  );
  return found.map(({ param, pointer }) => {
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
}

/** One place's checks compiled: its `content` parameters, its plain ones together, its alternatives. */
function compilePlace(
  set: SchemaSet,
  place: ParamPlace,
  planned: PlannedParam[],
  problems: CompileProblem[],
): CompiledPlace {
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
  const alternatives = compileAlternatives(set, place, planned, problems);
  return { place, params: plain.map((p) => p.plan), checks, alternatives, contents };
}

/** The checks of the place's parameters whose schema is a choice of alternatives. */
function compileAlternatives(
  set: SchemaSet,
  place: ParamPlace,
  planned: PlannedParam[],
  problems: CompileProblem[],
): Alternatives[] {
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
  return alternatives;
}

/** `operation` compiled, the first time it is asked for. */
export function compiledFor(doc: JsonObject, set: SchemaSet, operation: Operation): CompiledOperation {
  let compiled = compiledOps.get(operation);
  if (compiled === undefined) compiledOps.set(operation, (compiled = compileOperation(doc, set, operation)));
  return compiled;
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
