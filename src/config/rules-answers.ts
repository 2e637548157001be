import { routeParamNames } from '../route-path.js';
import { compileString, compileTemplate, compileWhen, isStatic, type AnswerIssue } from '../expression/index.js';
import { unknownParam, unknownScenario } from '../expression/compile.js';
import { ANSWER_KINDS } from './build-endpoints.js';
import type { FieldPath } from './field-path.js';
import { formatFieldPath } from './field-path.js';
import { checkStream } from './rules-stream.js';
import { bodyProblem, checkDuration, type RuleContext } from './rule-kit.js';
import { checkResponse } from './rules-response.js';

/**
 * The rules of dynamic answers a schema cannot express: one way of answering per endpoint, fields that only
 * mean something in one kind of list, non-empty lists, a pick that can pick something, unique answer
 * names, declared scenarios, and every `${…}` expression and `when` matcher compiled — each problem
 * at its line and column (inside an expression: at the character the engine points at).
 */

type Obj = Record<string, unknown>;

const LEAF_FIELDS = ['status', 'headers', 'body', 'bodyFile', 'delay', 'setState', 'faults', 'send', 'stream'] as const;
const ITEM_FIELDS: Record<string, string> = { when: 'responses', times: 'sequence', weight: 'pick' };
const ITEM_WORDS: Record<string, string> = {
  responses: 'the items of a `responses` list',
  sequence: 'the steps of a `sequence`',
  pick: 'the items of a `pick` list',
};

function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function has(o: Obj, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, key) && o[key] !== undefined;
}

/**
 * Compiles a `cost:` expression (src/answer/cost.ts compiles it the same way): the request, never
 * its number; `response` in a settle only. Its kind and traits, or the problem and its offset.
 */
export function compileCostExpression(
  text: string,
  settle: boolean,
  scenarios: readonly string[],
  params: readonly string[] | undefined,
): { kind: string; usesRandom: boolean } | { message: string; offset: number } {
  const compiled = compileString(text, {
    scenarios,
    ...(params === undefined ? {} : { params }),
    requestNumber: false,
    allowResponse: settle,
  });
  return compiled.ok ? compiled.value : compiled.issue;
}

/** The names of the declared scenarios (the schema checks their shape). */
export function checkScenarios(raw: unknown): string[] {
  return isObject(raw) ? Object.keys(raw) : [];
}

interface Walk {
  ctx: RuleContext;
  scenarios: readonly string[];
  /** Answer names seen in this endpoint, with where. */
  names: Map<string, FieldPath>;
  /** The `:name` parameters of the endpoint's path (and `*` for a wildcard); undefined when the path is not text. */
  params: readonly string[] | undefined;
}

function routeParams(path: unknown): string[] | undefined {
  if (typeof path !== 'string') return undefined;
  return routeParamNames(path);
}

/** `when: { params.idd: … }` on a route without `:idd` never holds: a typo. */
function checkWhenParams(walk: Walk, base: FieldPath, when: Obj): void {
  const { params } = walk;
  if (params === undefined) return;
  for (const key of Object.keys(when)) {
    if (!key.startsWith('params.')) continue;
    const name = key.slice('params.'.length);
    if (params.includes(name)) continue;
    const at = [...base, key];
    walk.ctx.issues.report(at, unknownParam(name, params), walk.ctx.issues.locator.keyAt(at));
  }
}

/** Reports an issue of the answer engine: inside a string at its character, on a `when` key at the key. */
function reportEngineIssue(walk: Walk, issue: AnswerIssue, keyDepth?: number): void {
  const { issues } = walk.ctx;
  if (issues.has(issue.path)) return;
  let position = issue.offset === undefined ? undefined : issues.locator.textAt(issue.path, issue.offset);
  // An unknown source or matcher is a key: point at it rather than at its value.
  const aboutKey =
    keyDepth !== undefined && (issue.path.length === keyDepth || issue.message.startsWith('is not a known matcher'));
  if (position === undefined && aboutKey) position = issues.locator.keyAt(issue.path);
  issues.report(issue.path, issue.message, position);
}

/** What every expression of the endpoint is checked against: the declared scenarios and the path's parameters. */
function expressionOptions(walk: Walk): {
  scenarios: readonly string[];
  params?: readonly string[];
  resources: readonly string[];
} {
  const resources = walk.ctx.resources ?? [];
  return walk.params === undefined
    ? { scenarios: walk.scenarios, resources }
    : { scenarios: walk.scenarios, params: walk.params, resources };
}

function checkExpression(walk: Walk, path: FieldPath, text: unknown): void {
  if (typeof text !== 'string' || walk.ctx.issues.has(path)) return;
  const result = compileString(text, expressionOptions(walk));
  if (!result.ok) reportEngineIssue(walk, { path, message: result.issue.message, offset: result.issue.offset });
}

function checkLeafExpressions(walk: Walk, path: FieldPath, leaf: Obj): void {
  const { issues } = walk.ctx;
  if (typeof leaf.status === 'string') checkExpression(walk, [...path, 'status'], leaf.status);
  if (isObject(leaf.headers)) {
    for (const [name, value] of Object.entries(leaf.headers)) checkExpression(walk, [...path, 'headers', name], value);
  }
  // bodyProblem first: a body JSON cannot carry (a cycle) is reported by checkResponse, not walked here.
  if (has(leaf, 'body') && bodyProblem(leaf.body, []) === undefined && !isStatic(leaf.body)) {
    const compiled = compileTemplate(leaf.body, { ...expressionOptions(walk), path: [...path, 'body'] });
    if (!compiled.ok) for (const issue of compiled.issues) reportEngineIssue(walk, issue);
  }
  if (has(leaf, 'delay')) checkDuration(walk.ctx, [...path, 'delay'], leaf.delay, false);
  if (has(leaf, 'stream')) checkStream(walk.ctx, path, leaf, expressionOptions(walk));
  if (isObject(leaf.setState)) {
    for (const name of Object.keys(leaf.setState)) {
      const at = [...path, 'setState', name];
      if (!walk.scenarios.includes(name) && !issues.has(at))
        issues.report(at, `sets an ${unknownScenario(name, walk.scenarios)}`, issues.locator.keyAt(at));
    }
  }
  checkName(walk, path, leaf);
}

function checkName(walk: Walk, path: FieldPath, answer: Obj): void {
  if (typeof answer.name !== 'string') return;
  const first = walk.names.get(answer.name);
  if (first === undefined) walk.names.set(answer.name, path);
  else
    walk.ctx.issues.report(
      [...path, 'name'],
      `repeats the answer name "${answer.name}" of ${formatFieldPath(first)}; names identify answers in logs and the journal, keep them unique`,
    );
}

function checkList(walk: Walk, path: FieldPath, list: unknown, kind: string): void {
  if (!Array.isArray(list) || walk.ctx.issues.has(path)) return;
  if (list.length === 0) {
    walk.ctx.issues.report(path, `must list at least one answer`);
    return;
  }
  if (
    kind === 'pick' &&
    list.every((item) => isObject(item) && typeof (item.weight ?? 1) === 'number' && (item.weight ?? 1) === 0)
  ) {
    walk.ctx.issues.report(path, 'needs at least one item with a weight above 0 (the default weight is 1)');
  }
  list.forEach((item, i) => checkItem(walk, [...path, i], item, kind));
}

/** Reports `loop` without `sequence` beside it, and a second selector beside the first. */
function checkSelectors(walk: Walk, path: FieldPath, answer: Obj, first: string): string[] {
  const { issues } = walk.ctx;
  const kinds = [first, ...ANSWER_KINDS].filter((k, i, all) => has(answer, k) && all.indexOf(k) === i);
  for (const extra of kinds.slice(1)) {
    const at = [...path, extra];
    issues.report(
      at,
      `cannot stand beside \`${kinds[0]}\`: an answer is exactly one of ${first === 'response' ? 'response, ' : ''}responses, sequence, pick`,
      issues.locator.keyAt(at),
    );
  }
  if (has(answer, 'loop') && !has(answer, 'sequence')) {
    const at = [...path, 'loop'];
    if (!issues.has(at)) issues.report(at, 'only means something beside `sequence`', issues.locator.keyAt(at));
  }
  return kinds;
}

function checkItem(walk: Walk, path: FieldPath, item: unknown, parentKind: string): void {
  if (!isObject(item)) return;
  const { issues } = walk.ctx;
  for (const [field, kind] of Object.entries(ITEM_FIELDS)) {
    const at = [...path, field];
    if (has(item, field) && kind !== parentKind && !issues.has(at)) {
      issues.report(
        at,
        `is only read on ${ITEM_WORDS[kind]}; this is one of ${ITEM_WORDS[parentKind]}`,
        issues.locator.keyAt(at),
      );
    }
  }
  if (parentKind === 'responses' && has(item, 'when') && !issues.has([...path, 'when'])) {
    const base = [...path, 'when'];
    const compiled = compileWhen(item.when, { scenarios: walk.scenarios, path: base });
    if (!compiled.ok) for (const issue of compiled.issues) reportEngineIssue(walk, issue, base.length + 1);
    else if (isObject(item.when)) checkWhenParams(walk, base, item.when);
  }
  const kinds = checkSelectors(walk, path, item, ANSWER_KINDS.find((k) => has(item, k)) ?? '');
  const [kind] = kinds;
  if (kind === undefined || kind === '') {
    checkResponse(walk.ctx, path, item);
    checkLeafExpressions(walk, path, item);
    return;
  }
  for (const field of LEAF_FIELDS) {
    const at = [...path, field];
    if (has(item, field) && !issues.has(at)) {
      issues.report(
        at,
        `cannot stand beside \`${kind}\`: put it on the answers inside the list`,
        issues.locator.keyAt(at),
      );
    }
  }
  checkName(walk, path, item);
  checkList(walk, [...path, kind], item[kind], kind);
}

/** The dynamic-answer rules of one endpoint (at `base`, e.g. `['endpoints', 0]`). */
export function checkAnswers(ctx: RuleContext, base: FieldPath, endpoint: Obj, scenarios: readonly string[]): void {
  const walk: Walk = { ctx, scenarios, names: new Map(), params: routeParams(endpoint.path) };
  const kinds = checkSelectors(
    walk,
    base,
    endpoint,
    has(endpoint, 'response') ? 'response' : (ANSWER_KINDS.find((k) => has(endpoint, k)) ?? ''),
  );
  if (has(endpoint, 'seedBy')) {
    const at = [...base, 'seedBy'];
    checkExpression(walk, at, endpoint.seedBy);
    const compiled =
      typeof endpoint.seedBy === 'string' && !ctx.issues.has(at) ? compileString(endpoint.seedBy) : undefined;
    if (compiled?.ok === true && compiled.value.usesRandom)
      ctx.issues.report(
        at,
        'cannot draw random values (uuid, randomInt, fake.*): it decides them; read the request, e.g. ${params.id}',
      );
  }
  const [kind] = kinds;
  if (kind === 'response' && isObject(endpoint.response))
    checkLeafExpressions(walk, [...base, 'response'], endpoint.response);
  else if (kind !== undefined && kind !== '' && kind !== 'response')
    checkList(walk, [...base, kind], endpoint[kind], kind);
}
