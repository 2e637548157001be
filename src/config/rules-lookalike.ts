import { compileString, compileTemplate, isStatic } from '../expression/index.js';
import { FRAMING_HEADERS, serverHeaderOptions } from './server-headers.js';
import type { FieldPath } from './field-path.js';
import { describeValue } from './issues.js';
import { bodyProblem, type RuleContext } from './rule-kit.js';
import { checkResponse } from './rules-response.js';

/**
 * The rules of the look-alike fields a schema cannot express: `server.basePath` (a path that leaves
 * mockapi's own `/__mockapi/` calls reachable), `server.headers` (located expressions, no framing
 * header) and the `${…}` expressions of `errors:` templates, which may also read `error.*` and `key.*`.
 */

type Obj = Record<string, unknown>;

const RESERVED = '/__mockapi';

function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** What is wrong with a `server.basePath`, or undefined. */
export function basePathProblem(value: string): string | undefined {
  if (!value.startsWith('/')) return 'must start with `/` (`/mock`, `/v1`, or `/` for the root)';
  if (/[?#\s]/.test(value)) return 'must be a path without spaces, `?` or `#`';
  const trimmed = value.replace(/\/+$/, '');
  if (trimmed === RESERVED || trimmed.startsWith(`${RESERVED}/`))
    return "cannot be `/__mockapi` or under it: that path is reserved for mockapi's own calls";
  return undefined;
}

function checkBasePath(ctx: RuleContext, server: unknown): void {
  if (!isObject(server) || typeof server.basePath !== 'string') return;
  const path = ['server', 'basePath'];
  if (ctx.issues.has(path)) return;
  const problem = basePathProblem(server.basePath);
  if (problem !== undefined) ctx.issues.report(path, `${problem}, got ${describeValue(server.basePath)}`);
}

/** `server.headers`: no framing header, no name twice, every value's expressions compile (located). */
function checkServerHeaders(ctx: RuleContext, server: unknown, scenarios: readonly string[]): void {
  if (!isObject(server) || !isObject(server.headers)) return;
  checkResponse(ctx, ['server'], { headers: server.headers }); // a name twice (any case)
  const options = serverHeaderOptions(scenarios);
  for (const [name, value] of Object.entries(server.headers)) {
    const at = ['server', 'headers', name];
    if (ctx.issues.has(at)) continue;
    if (FRAMING_HEADERS.includes(name.toLowerCase())) {
      ctx.issues.report(
        at,
        `cannot be set here: \`${name}\` frames the message or the connection, which every answer sets for itself`,
        ctx.issues.locator.keyAt(at),
      );
      continue;
    }
    if (typeof value !== 'string') continue;
    const result = compileString(value, options);
    if (!result.ok) ctx.issues.report(at, result.issue.message, ctx.issues.locator.textAt(at, result.issue.offset));
  }
}

/** One `errors.<kind>` (or an endpoint's `errors.simulatedFailure`): its headers and body compile. */
function checkErrorTemplate(ctx: RuleContext, base: FieldPath, template: unknown, scenarios: readonly string[]): void {
  if (!isObject(template)) return;
  checkResponse(ctx, base, template);
  const options = { scenarios, errorSources: true };
  if (isObject(template.headers)) {
    for (const [name, value] of Object.entries(template.headers)) {
      const at = [...base, 'headers', name];
      if (typeof value !== 'string' || ctx.issues.has(at)) continue;
      const result = compileString(value, options);
      if (!result.ok) ctx.issues.report(at, result.issue.message, ctx.issues.locator.textAt(at, result.issue.offset));
    }
  }
  if (Object.hasOwn(template, 'body') && bodyProblem(template.body, []) === undefined && !isStatic(template.body)) {
    const compiled = compileTemplate(template.body, { ...options, path: [...base, 'body'] });
    if (!compiled.ok) {
      for (const issue of compiled.issues) {
        if (ctx.issues.has(issue.path)) continue;
        ctx.issues.report(
          issue.path,
          issue.message,
          issue.offset === undefined ? undefined : ctx.issues.locator.textAt(issue.path, issue.offset),
        );
      }
    }
  }
}

/** Reports every look-alike rule violation of `data` (already checked against the schema). */
export function checkLookalike(data: Obj, ctx: RuleContext, scenarios: readonly string[]): void {
  checkBasePath(ctx, data.server);
  checkServerHeaders(ctx, data.server, scenarios);
  if (isObject(data.errors)) {
    for (const [kind, template] of Object.entries(data.errors))
      checkErrorTemplate(ctx, ['errors', kind], template, scenarios);
  }
  if (Array.isArray(data.endpoints)) {
    data.endpoints.forEach((endpoint: unknown, index) => {
      if (isObject(endpoint) && isObject(endpoint.errors))
        checkErrorTemplate(
          ctx,
          ['endpoints', index, 'errors', 'simulatedFailure'],
          endpoint.errors.simulatedFailure,
          scenarios,
        );
    });
  }
}
