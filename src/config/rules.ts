import { accessSync, constants, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { FieldPath } from './field-path.js';
import { describeValue, type IssueList } from './issues.js';
import { routePathProblem, routeShape } from './route-path.js';
import { checkAnswers, checkScenarios } from './rules-answers.js';
import { checkKeys } from './rules-keys.js';
import { checkUpstream } from './rules-upstream.js';
import { checkViolationAnswer } from './rules-openapi.js';
import { checkHttps } from './rules-https.js';
import { checkDelay, checkFaults, checkQuotaRetryAfter } from './rules-resilience.js';
import { checkWebhooks } from './rules-webhooks.js';
import { checkLookalike } from './rules-lookalike.js';
import { checkResources, resourceNames } from '../resources/rules.js';
import { endpointText, type CheckedEndpoints } from './endpoint-reuse.js';
import { durationProblem, parseDuration, parseFailRate, parseSize, sizeProblem } from './units.js';

/**
 * The rules a JSON Schema cannot express, checked after it on the same data: units that need
 * arithmetic, the path grammar, duplicate routes and headers, body files on disk, bodies JSON can
 * carry. Each rule looks only at values of the right type that the schema did not already refuse,
 * so every problem is reported once. Linear in the size of the config.
 */

/** Deeper bodies are refused: serialising them would overflow the stack. */
export const MAX_BODY_DEPTH = 1000;

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function has(o: Obj, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, key);
}

export interface RuleContext {
  issues: IssueList;
  /** Folder that body files are resolved against. */
  dir: string;
  /** On a reload: endpoint data that passed every rule before, checked again only for duplicate routes. */
  checked?: CheckedEndpoints;
  /** The names of the configured resources (`resources.<name>` in expressions must name one). */
  resources?: readonly string[];
}

export function checkDuration(ctx: RuleContext, path: FieldPath, value: unknown, mustBePositive: boolean): void {
  if (ctx.issues.has(path)) return;
  const ms = parseDuration(value);
  if (ms === undefined && typeof value === 'string') ctx.issues.report(path, `${durationProblem(value)}, got ${describeValue(value)}`);
  else if (ms === 0 && mustBePositive) ctx.issues.report(path, `must be longer than 0, got ${describeValue(value)}`);
}

function checkServer(ctx: RuleContext, server: unknown): void {
  if (!isObject(server) || typeof server.maxBodySize !== 'string') return;
  const path = ['server', 'maxBodySize'];
  if (!ctx.issues.has(path) && parseSize(server.maxBodySize) === undefined) {
    ctx.issues.report(path, `${sizeProblem(server.maxBodySize)}, got ${describeValue(server.maxBodySize)}`);
  }
}

function checkLimits(ctx: RuleContext, limits: unknown): void {
  checkQuotaRetryAfter(ctx, limits);
  if (!isObject(limits) || !isObject(limits.rateLimit) || !has(limits.rateLimit, 'window')) return;
  checkDuration(ctx, ['limits', 'rateLimit', 'window'], limits.rateLimit.window, true);
}

function describeKind(value: unknown): string {
  if (typeof value !== 'object' || value === null) return `a ${typeof value}`;
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return typeof name === 'string' && name !== '' ? `a ${name}` : 'an object';
}

/**
 * Whether `value` is certainly fine as a JSON body: plain mappings, lists and finite numbers, at
 * most `depth` levels deep, within `budget` values. Allocates nothing, so the usual body costs
 * little; false means "look closer" (a problem, or shared values that would take too long this way).
 */
function isPlainJson(value: unknown, depth: number, budget: { left: number }): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value !== 'object' || depth === 0 || --budget.left < 0) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!isPlainJson(item, depth - 1, budget)) return false;
    return true;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const key in value) if (!isPlainJson((value as Obj)[key], depth - 1, budget)) return false;
  return true;
}

/** The first reason `body` cannot be sent as JSON, with where it is inside the body. */
export function bodyProblem(body: unknown, base: FieldPath): { path: FieldPath; message: string } | undefined {
  if (isPlainJson(body, MAX_BODY_DEPTH, { left: 100_000 })) return undefined;
  const done = new WeakSet<object>(); // shared values (YAML aliases) are checked once
  const onStack = new WeakSet<object>();
  type Frame = { value: unknown; path: FieldPath; depth: number; exit: boolean };
  const stack: Frame[] = [{ value: body, path: base, depth: 0, exit: false }];
  while (stack.length > 0) {
    const { value, path, depth, exit } = stack.pop() as Frame;
    if (exit) {
      onStack.delete(value as object);
      done.add(value as object);
      continue;
    }
    if (value === null || typeof value === 'string' || typeof value === 'boolean') continue;
    if (typeof value === 'number') {
      if (Number.isFinite(value)) continue;
      return { path, message: `is ${describeValue(value)}, which JSON cannot represent` };
    }
    if (typeof value !== 'object') return { path, message: `cannot be sent as JSON (${describeKind(value)})` };
    if (done.has(value)) continue;
    if (onStack.has(value)) return { path, message: 'contains itself (a cycle), which JSON cannot represent' };
    const proto = Object.getPrototypeOf(value) as unknown;
    if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) {
      return { path, message: `cannot be sent as JSON (${describeKind(value)}); use mappings, lists, strings, numbers, booleans and null` };
    }
    if (depth >= MAX_BODY_DEPTH) return { path, message: `is nested more than ${MAX_BODY_DEPTH} levels deep` };
    onStack.add(value);
    stack.push({ value, path, depth, exit: true });
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: [...path, i], depth: depth + 1, exit: false });
    } else {
      for (const [key, child] of Object.entries(value)) stack.push({ value: child, path: [...path, key], depth: depth + 1, exit: false });
    }
  }
  return undefined;
}

function checkBodyFile(ctx: RuleContext, path: FieldPath, file: string): void {
  const absolute = resolve(ctx.dir, file);
  let problem: string | undefined;
  try {
    const stat = statSync(absolute, { throwIfNoEntry: false });
    if (stat === undefined) problem = `does not exist (looked for ${absolute})`;
    else if (stat.isDirectory()) problem = `is a folder, not a file (${absolute})`;
    else if (!stat.isFile()) problem = `is not a regular file (${absolute})`;
    else accessSync(absolute, constants.R_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    problem = code === 'EACCES' || code === 'EPERM' ? `cannot be read: permission denied (${absolute})` : `cannot be read (${absolute}): ${(err as Error).message}`;
  }
  if (problem !== undefined) ctx.issues.report(path, `${describeValue(file)} ${problem}`);
}

/** The checks of one leaf answer (a `response:` or an item of `responses`/`sequence`/`pick`): headers, body file, JSON body. */
export function checkResponse(ctx: RuleContext, base: FieldPath, response: unknown): void {
  if (!isObject(response)) return;
  if (isObject(response.headers)) {
    const seen = new Map<string, string>();
    for (const name of Object.keys(response.headers)) {
      const lower = name.toLowerCase();
      const first = seen.get(lower);
      const path = [...base, 'headers', name];
      if (first !== undefined && !ctx.issues.has(path)) {
        ctx.issues.report(path, `repeats the header \`${first}\` (header names are case-insensitive); keep one`, ctx.issues.locator.keyAt(path));
      }
      if (first === undefined) seen.set(lower, name);
    }
  }
  checkFaults(ctx, [...base, 'faults'], response.faults);
  const bodyFilePath = [...base, 'bodyFile'];
  if (typeof response.bodyFile === 'string' && !ctx.issues.has(bodyFilePath)) checkBodyFile(ctx, bodyFilePath, response.bodyFile);
  if (has(response, 'body')) {
    const problem = bodyProblem(response.body, [...base, 'body']);
    if (problem !== undefined) ctx.issues.report(problem.path, problem.message);
  }
}

function checkEndpoints(ctx: RuleContext, endpoints: unknown, scenarios: readonly string[]): void {
  if (!Array.isArray(endpoints)) return;
  const routes = new Map<string, number>(); // the index of the first endpoint of each route
  const checked = ctx.checked !== undefined && sameNames(ctx.checked.scenarios, scenarios) ? ctx.checked.texts : undefined;
  for (let index = 0; index < endpoints.length; index++) {
    const endpoint: unknown = endpoints[index];
    if (!isObject(endpoint)) continue;
    if (checked !== undefined && checked.has(endpointText(endpoint) ?? '')) {
      // the data passed every other rule before; its route is known since (the same object, unchanged)
      const key = routeKeys.get(endpoint) ?? routeKey(endpoint, endpoint.method as string, endpoint.path as string);
      checkRoute(ctx, routes, endpoints, index, key);
      continue;
    }
    const base: FieldPath = ['endpoints', index];
    const pathField = [...base, 'path'];
    let routeOk = typeof endpoint.path === 'string' && !ctx.issues.has(pathField);
    if (routeOk) {
      const problem = routePathProblem(endpoint.path as string);
      if (problem !== undefined) {
        ctx.issues.report(pathField, `${problem}, got ${describeValue(endpoint.path)}`);
        routeOk = false;
      }
    }
    if (has(endpoint, 'delay')) checkDelay(ctx, [...base, 'delay'], endpoint.delay);
    checkFaults(ctx, [...base, 'faults'], endpoint.faults);
    const failRatePath = [...base, 'failRate'];
    if (typeof endpoint.failRate === 'string' && !ctx.issues.has(failRatePath) && parseFailRate(endpoint.failRate) === undefined) {
      ctx.issues.report(failRatePath, `must be a percentage from 0% to 100%, got ${describeValue(endpoint.failRate)}`);
    }
    checkResponse(ctx, [...base, 'response'], endpoint.response);
    checkAnswers(ctx, base, endpoint, scenarios);
    if (routeOk && typeof endpoint.method === 'string' && !ctx.issues.has([...base, 'method'])) checkRoute(ctx, routes, endpoints, index, routeKey(endpoint, endpoint.method, endpoint.path as string));
  }
}

const sameNames = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((name, i) => name === b[i]);

/**
 * The route (`GET /users/:`) of each endpoint's data, for a reload that reads it again unchanged
 * (the same object: config/fast-read-reuse.ts). Kept for any data, but only taken for the data of
 * a reload (see checkEndpoints), which the config reader made and nothing changes.
 */
const routeKeys = new WeakMap<object, string>();

/** The route of an endpoint (`GET /users/:`, see routeShape), kept for its `data`. */
function routeKey(data: object, method: string, path: string): string {
  const key = `${method.toUpperCase()} ${routeShape(path)}`;
  routeKeys.set(data, key);
  return key;
}

/** Reports endpoints[index] when an earlier endpoint has the same route (`key`). */
function checkRoute(ctx: RuleContext, routes: Map<string, number>, endpoints: unknown[], index: number, key: string): void {
  const firstIndex = routes.get(key);
  if (firstIndex === undefined) {
    routes.set(key, index);
    return;
  }
  const [method, path] = methodAndPath(endpoints[index]);
  const [firstMethod, firstPath] = methodAndPath(endpoints[firstIndex]);
  const base: FieldPath = ['endpoints', index];
  const firstAt = ctx.issues.locator.valueAt(['endpoints', firstIndex]);
  const line = firstAt.line > 0 ? `, line ${firstAt.line}` : '';
  const why = firstPath === path ? '' : ' (parameter names and a trailing slash do not make routes different)';
  ctx.issues.report(base, `(${method} ${path}) is the same route as endpoints[${firstIndex}] (${firstMethod} ${firstPath}${line})${why}; change the method or path of one`, ctx.issues.locator.valueAt([...base, 'path']));
}

/** The method (upper case) and path of endpoint data whose route was checked. */
function methodAndPath(endpoint: unknown): [string, string] {
  const { method, path } = endpoint as { method: string; path: string };
  return [method.toUpperCase(), path];
}

/** Reports every rule violation of `data` (already checked against the schema) to `ctx.issues`. */
export function checkRules(data: unknown, ctx: RuleContext): void {
  if (!isObject(data)) return;
  ctx.resources = resourceNames(data.resources);
  checkServer(ctx, data.server);
  checkViolationAnswer(ctx.issues, data);
  checkHttps(ctx, data.server);
  checkLimits(ctx, data.limits);
  checkEndpoints(ctx, data.endpoints, checkScenarios(data.scenarios));
  checkWebhooks(ctx, data);
  checkKeys(ctx, data);
  checkUpstream(ctx, data);
  checkLookalike(data, ctx, checkScenarios(data.scenarios));
  checkResources(ctx, data);
}
