import type { FieldPath } from './field-path.js';
import { describeValue } from './issues.js';
import { routePathProblem, routeShape } from '../route-path.js';
import { checkAnswers, checkScenarios } from './rules-answers.js';
import { checkKeys } from './rules-keys.js';
import { checkMetersAndCosts } from './rules-meters.js';
import { checkUpstream } from './rules-upstream.js';
import { checkViolationAnswer } from './rules-openapi.js';
import { checkHttps } from './rules-https.js';
import { checkDelay, checkFaults, checkQuotaRetryAfter } from './rules-resilience.js';
import { checkResponse } from './rules-response.js';
import { checkDuration, has, isObject, type RuleContext } from './rule-kit.js';
import { checkWebhooks } from './rules-webhooks.js';
import { checkLookalike } from './rules-lookalike.js';
import { checkResources, resourceNames } from './rules-resources.js';
import { checkVerify } from './rules-verify.js';
import { fleetStoreProblem } from './fleet.js';
import { endpointText } from './endpoint-reuse.js';
import { parseFailRate, parseSize, sizeProblem } from './units.js';

/**
 * The rules a JSON Schema cannot express, checked after it on the same data: units that need
 * arithmetic, the path grammar, duplicate routes and headers, body files on disk, bodies JSON can
 * carry. Each rule looks only at values of the right type that the schema did not already refuse,
 * so every problem is reported once. Linear in the size of the config.
 */

function checkServer(ctx: RuleContext, server: unknown): void {
  if (!isObject(server) || typeof server.maxBodySize !== 'string') return;
  const path = ['server', 'maxBodySize'];
  if (!ctx.issues.has(path) && parseSize(server.maxBodySize) === undefined) {
    ctx.issues.report(path, `${sizeProblem(server.maxBodySize)}, got ${describeValue(server.maxBodySize)}`);
  }
}

function checkFleet(ctx: RuleContext, fleet: unknown): void {
  const path = ['fleet', 'store'];
  if (!isObject(fleet) || typeof fleet.store !== 'string' || ctx.issues.has(path)) return;
  const problem = fleetStoreProblem(fleet.store);
  if (problem !== undefined) ctx.issues.report(path, problem);
}

function checkLimits(ctx: RuleContext, limits: unknown): void {
  checkQuotaRetryAfter(ctx, limits);
  if (!isObject(limits) || !isObject(limits.rateLimit) || !has(limits.rateLimit, 'window')) return;
  checkDuration(ctx, ['limits', 'rateLimit', 'window'], limits.rateLimit.window, true);
}

function checkSessions(ctx: RuleContext, sessions: unknown): void {
  if (!isObject(sessions) || !has(sessions, 'ttl')) return;
  checkDuration(ctx, ['sessions', 'ttl'], sessions.ttl, true);
}

function checkEndpoints(ctx: RuleContext, endpoints: unknown, scenarios: readonly string[]): void {
  if (!Array.isArray(endpoints)) return;
  const routes = new Map<string, number>(); // the index of the first endpoint of each route
  const checked =
    ctx.checked !== undefined && sameNames(ctx.checked.scenarios, scenarios) ? ctx.checked.texts : undefined;
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
    if (
      typeof endpoint.failRate === 'string' &&
      !ctx.issues.has(failRatePath) &&
      parseFailRate(endpoint.failRate) === undefined
    ) {
      ctx.issues.report(failRatePath, `must be a percentage from 0% to 100%, got ${describeValue(endpoint.failRate)}`);
    }
    checkResponse(ctx, [...base, 'response'], endpoint.response);
    checkAnswers(ctx, base, endpoint, scenarios);
    if (routeOk && typeof endpoint.method === 'string' && !ctx.issues.has([...base, 'method']))
      checkRoute(ctx, routes, endpoints, index, routeKey(endpoint, endpoint.method, endpoint.path as string));
  }
}

const sameNames = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((name, i) => name === b[i]);

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
function checkRoute(
  ctx: RuleContext,
  routes: Map<string, number>,
  endpoints: unknown[],
  index: number,
  key: string,
): void {
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
  ctx.issues.report(
    base,
    `(${method} ${path}) is the same route as endpoints[${firstIndex}] (${firstMethod} ${firstPath}${line})${why}; change the method or path of one`,
    ctx.issues.locator.valueAt([...base, 'path']),
  );
}

/** The method (upper case) and path of endpoint data whose route was checked. */
function methodAndPath(endpoint: unknown): [string, string] {
  const { method, path } = endpoint as { method: string; path: string };
  return [method.toUpperCase(), path];
}

/** Reports every rule violation of `data` (already checked against the schema) to `ctx.issues`. */
export function checkRules(data: unknown, ctx: RuleContext): void {
  if (!isObject(data)) return;
  ctx.resources = [...resourceNames(data.resources), ...(ctx.served?.resources ?? [])];
  checkServer(ctx, data.server);
  checkViolationAnswer(ctx.issues, data);
  checkHttps(ctx, data.server);
  checkLimits(ctx, data.limits);
  checkSessions(ctx, data.sessions);
  checkEndpoints(ctx, data.endpoints, checkScenarios(data.scenarios));
  checkWebhooks(ctx, data);
  checkKeys(ctx, data);
  checkMetersAndCosts(ctx, data, checkScenarios(data.scenarios));
  checkUpstream(ctx, data);
  checkLookalike(data, ctx, checkScenarios(data.scenarios));
  checkResources(ctx, data);
  checkVerify(ctx, data);
  checkFleet(ctx, data.fleet);
}
