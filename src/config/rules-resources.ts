import { compileString, compileTemplate, isStatic, type AnswerIssue } from '../expression/index.js';
import type { ExpressionOptions } from '../expression/compile.js';
import type { FieldPath } from './field-path.js';
import { describeValue } from './issues.js';
import { bodyProblem, checkDuration, type RuleContext } from './rule-kit.js';
import { routePathProblem } from '../route-path.js';
import { suggestField } from '../suggest-field.js';
import { RESOURCE_SETTINGS } from './build-resources.js';
import { collectionParams, routeOf } from './collection-path.js';
import { compileObjectWhen } from '../expression/object-when.js';

/**
 * The rules of `resources:` and `idempotency:` a schema cannot express, each at its line: paths
 * (whole-segment parameters only; two collections on one route), `${…}` in `id`, `fields`,
 * `set`, `send` data and `errors` that compile, seed objects JSON can carry with ids of their own,
 * `when` matchers, lifecycle durations and weights, and every `send` naming a configured target.
 * A resource's route may be an endpoint's too: the endpoint answers that method and path.
 */

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The names of the collections under `resources:` (the schema checks their shape). */
export function resourceNames(raw: unknown): string[] {
  if (!isObject(raw)) return [];
  return Object.keys(raw).filter(
    (name) => !(RESOURCE_SETTINGS as readonly string[]).includes(name) && isObject(raw[name]),
  );
}

interface Walk {
  ctx: RuleContext;
  names: readonly string[];
  targets: readonly string[];
  scenarios: readonly string[];
}

function report(walk: Walk, path: FieldPath, message: string, atKey = false): void {
  const { issues } = walk.ctx;
  if (!issues.has(path)) issues.report(path, message, atKey ? issues.locator.keyAt(path) : undefined);
}

function reportEngine(walk: Walk, issue: AnswerIssue): void {
  const { issues } = walk.ctx;
  if (issues.has(issue.path)) return;
  issues.report(
    issue.path,
    issue.message,
    issue.offset === undefined ? undefined : issues.locator.textAt(issue.path, issue.offset),
  );
}

/** What the expressions of a collection may read: the request, its path's parameters, `resource` and `resources.<name>`. */
export function resourceExpressionOptions(
  params: readonly string[],
  names: readonly string[],
  scenarios: readonly string[],
): ExpressionOptions {
  return { params: [...params, 'id'], scenarios, resources: names, allowResource: true };
}

function checkText(walk: Walk, path: FieldPath, text: unknown, options: ExpressionOptions): void {
  if (typeof text !== 'string' || walk.ctx.issues.has(path)) return;
  const result = compileString(text, options);
  if (!result.ok) reportEngine(walk, { path, message: result.issue.message, offset: result.issue.offset });
}

function checkTemplate(walk: Walk, path: FieldPath, value: unknown, options: ExpressionOptions): void {
  if (value === undefined || walk.ctx.issues.has(path)) return;
  const problem = bodyProblem(value, path);
  if (problem !== undefined) return report(walk, problem.path, problem.message);
  if (isStatic(value)) return;
  const compiled = compileTemplate(value, { ...options, path });
  if (!compiled.ok) compiled.issues.forEach((issue) => reportEngine(walk, issue));
}

function checkWhen(walk: Walk, path: FieldPath, when: unknown): void {
  if (!isObject(when) || walk.ctx.issues.has(path)) return;
  const compiled = compileObjectWhen(when, path);
  if (compiled.ok) return;
  for (const issue of compiled.issues) {
    const atKey = issue.path.length === path.length + 1 || issue.message.startsWith('is not a known matcher');
    report(walk, issue.path, issue.message, atKey && issue.offset === undefined);
  }
}

function checkSend(walk: Walk, path: FieldPath, send: unknown, options: ExpressionOptions): void {
  if (!Array.isArray(send)) return;
  send.forEach((item: unknown, i) => {
    const at = [...path, i];
    // An event without `to` goes to every target: with none configured, nowhere (the contract's own
    // example sends events and configures no webhooks); one that names a target needs it to exist.
    if (!isObject(item)) return;
    if (typeof item.to === 'string' && walk.targets.length === 0)
      report(walk, [...at, 'to'], 'names a target, but webhooks.targets has none; add it there');
    else if (typeof item.to === 'string' && !walk.targets.includes(item.to)) {
      const hint = suggestField(item.to, walk.targets);
      report(
        walk,
        [...at, 'to'],
        `names no entry of webhooks.targets: ${hint !== undefined ? `did you mean "${hint}"?` : `webhooks.targets has ${walk.targets.join(', ')}`}`,
      );
    }
    if (item.after !== undefined) checkDuration(walk.ctx, [...at, 'after'], item.after, false);
    checkTemplate(walk, [...at, 'data'], item.data, options);
  });
}

function checkMove(walk: Walk, path: FieldPath, move: Obj, options: ExpressionOptions): void {
  if (move.after !== undefined) checkDuration(walk.ctx, [...path, 'after'], move.after, false);
  if (isObject(move.to) && !walk.ctx.issues.has([...path, 'to'])) {
    const weights = Object.values(move.to).filter((w): w is number => typeof w === 'number');
    if (weights.length > 0 && !weights.some((w) => w > 0))
      report(walk, [...path, 'to'], 'needs at least one weight above 0');
  }
  if (move.from !== undefined && move.from === move.to)
    report(
      walk,
      [...path, 'to'],
      `is the status it moves from (${describeValue(move.from)}); a move must change the status`,
    );
  checkTemplate(walk, [...path, 'set'], move.set, options);
  checkWhen(walk, [...path, 'when'], move.when);
  checkSend(walk, [...path, 'send'], move.send, options);
}

function checkSeed(walk: Walk, path: FieldPath, seed: unknown): void {
  if (!Array.isArray(seed)) return;
  const ids = new Map<string, number>();
  seed.forEach((item: unknown, i) => {
    const at = [...path, i];
    const problem = bodyProblem(item, at);
    if (problem !== undefined) return report(walk, problem.path, problem.message);
    if (!isObject(item) || item.id === undefined) return;
    if (typeof item.id !== 'string' && !Number.isSafeInteger(item.id))
      return report(walk, [...at, 'id'], `must be text or a whole number, got ${describeValue(item.id)}`);
    if (item.id === '') return report(walk, [...at, 'id'], 'must not be empty (no path could reach the object)');
    const first = ids.get(String(item.id));
    if (first !== undefined)
      report(
        walk,
        [...at, 'id'],
        `repeats the id of seed[${first}] (${describeValue(item.id)}); ids are unique in a collection`,
      );
    else ids.set(String(item.id), i);
  });
}

/** Checks one collection; returns its route (`/v1/customers`) when its path is right. */
function checkCollection(walk: Walk, name: string, raw: Obj): string | undefined {
  const base: FieldPath = ['resources', name];
  let route: string | undefined;
  let params: readonly string[] = [];
  if (typeof raw.path === 'string' && !walk.ctx.issues.has([...base, 'path'])) {
    const problem =
      routePathProblem(raw.path) ??
      (collectionParams(raw.path) === undefined
        ? 'takes parameters only as whole segments (`/repos/:owner/:repo/issues`)'
        : undefined);
    if (problem !== undefined) report(walk, [...base, 'path'], `${problem}, got ${describeValue(raw.path)}`);
    else {
      route = routeOf(raw.path);
      params = collectionParams(raw.path) ?? [];
    }
  }
  const options = resourceExpressionOptions(params, walk.names, walk.scenarios);
  checkText(walk, [...base, 'id'], raw.id, options);
  checkTemplate(walk, [...base, 'fields'], isObject(raw.fields) ? raw.fields : undefined, options);
  checkSeed(walk, [...base, 'seed'], raw.seed);
  if (isObject(raw.actions)) {
    for (const [action, spec] of Object.entries(raw.actions)) {
      if (!isObject(spec)) continue;
      const at = [...base, 'actions', action];
      checkTemplate(walk, [...at, 'set'], spec.set, options);
      checkWhen(walk, [...at, 'when'], spec.when);
      checkSend(walk, [...at, 'send'], spec.send, options);
    }
  }
  if (Array.isArray(raw.lifecycle))
    raw.lifecycle.forEach(
      (move: unknown, i) => isObject(move) && checkMove(walk, [...base, 'lifecycle', i], move, options),
    );
  if (isObject(raw.errors) && isObject(raw.errors.notFound)) {
    const at = [...base, 'errors', 'notFound'];
    const errorOptions = { ...options, errorSources: true, allowResource: false };
    checkTemplate(walk, [...at, 'body'], raw.errors.notFound.body, errorOptions);
    if (isObject(raw.errors.notFound.headers))
      for (const [header, value] of Object.entries(raw.errors.notFound.headers))
        checkText(walk, [...at, 'headers', header], value, errorOptions);
  }
  return route;
}

/** Reports two collections on one route, and a collection whose route is another's item route. */
function checkRoutes(walk: Walk, routes: Map<string, string>): void {
  const owner = new Map<string, string>();
  for (const [name, route] of routes) {
    const first = owner.get(route);
    if (first !== undefined) {
      report(
        walk,
        ['resources', name, 'path'],
        `is the path of resources.${first} too (parameter names do not make paths different); give each collection a path of its own`,
      );
      continue;
    }
    owner.set(route, name);
  }
  for (const [name, route] of routes) {
    for (const [other, otherRoute] of routes) {
      if (other !== name && route === `${otherRoute}/:`)
        report(
          walk,
          ['resources', name, 'path'],
          `is where the objects of resources.${other} are (${otherRoute}/:id); give the collection another path`,
        );
    }
  }
}

/** Reports the problems of `resources:` and `idempotency:` of `data` (already checked against the schema). */
export function checkResources(ctx: RuleContext, data: Obj): void {
  if (isObject(data.idempotency) && data.idempotency.ttl !== undefined)
    checkDuration(ctx, ['idempotency', 'ttl'], data.idempotency.ttl, true);
  if (!isObject(data.resources)) return;
  const webhooks = isObject(data.webhooks) ? data.webhooks : {};
  const walk: Walk = {
    ctx,
    names: resourceNames(data.resources),
    targets: isObject(webhooks.targets) ? Object.keys(webhooks.targets) : [],
    scenarios: isObject(data.scenarios) ? Object.keys(data.scenarios) : [],
  };
  const routes = new Map<string, string>();
  for (const name of walk.names) {
    const route = checkCollection(walk, name, data.resources[name] as Obj);
    if (route !== undefined) routes.set(name, route);
  }
  checkRoutes(walk, routes);
}
