import type { FieldPath } from './field-path.js';
import { routeParamNames, routePathProblem, routePattern } from '../route-path.js';
import type { RuleContext } from './rule-kit.js';
import { findSecretShapes } from '../redact/secret-shapes.js';
import { parseIgnore } from './verify-ignore.js';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Request headers an example may not set: the real API's credential comes from `upstream.auth`, the mock's is added. */
const CREDENTIAL_HEADERS = /^(authorization|proxy-authorization|x-api-key|api-key|cookie)$/i;

function checkIgnore(ctx: RuleContext, base: FieldPath, ignore: unknown): void {
  if (!Array.isArray(ignore)) return;
  ignore.forEach((entry, i) => {
    if (typeof entry !== 'string' || ctx.issues.has([...base, i])) return;
    const parsed = parseIgnore(entry);
    if (typeof parsed === 'string') ctx.issues.report([...base, i], parsed);
  });
}

/** A literal secret in an example is refused: the config is committed. */
function checkSecret(ctx: RuleContext, path: FieldPath, text: string): void {
  const found = findSecretShapes(text)[0];
  if (found !== undefined && !ctx.issues.has(path))
    ctx.issues.report(
      path,
      `holds ${found.name}: a literal credential would be committed with the config; the real API's key comes from upstream.auth`,
    );
}

function checkRequest(ctx: RuleContext, base: FieldPath, request: Obj, route: string | undefined): void {
  if (isObject(request.headers)) {
    for (const [name, value] of Object.entries(request.headers)) {
      const path = [...base, 'headers', name];
      if (CREDENTIAL_HEADERS.test(name))
        ctx.issues.report(
          path,
          "is a credential header: mockapi verify sends upstream.auth to the real API and the mock's own key to the mock",
          ctx.issues.locator.keyAt(path),
        );
      else if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
        ctx.issues.report(path, 'is not a valid header name', ctx.issues.locator.keyAt(path));
      else if (typeof value === 'string') checkSecret(ctx, path, value);
    }
  }
  if (isObject(request.query)) {
    for (const [name, value] of Object.entries(request.query))
      checkSecret(ctx, [...base, 'query', name], JSON.stringify(value));
  }
  if (Object.hasOwn(request, 'body'))
    checkSecret(
      ctx,
      [...base, 'body'],
      typeof request.body === 'string' ? request.body : (JSON.stringify(request.body) ?? ''),
    );
  if (route === undefined) return;
  const names = routeParamNames(route) ?? [];
  if (typeof request.path === 'string' && !ctx.issues.has([...base, 'path'])) {
    if (isObject(request.params))
      ctx.issues.report(
        [...base, 'path'],
        'and params cannot both be given: the path is the whole path, parameters included',
      );
    else if (!routePattern(route).test(request.path))
      ctx.issues.report([...base, 'path'], `is not a path the endpoint ${route} answers`);
  }
  if (isObject(request.params)) {
    for (const name of Object.keys(request.params)) {
      if (names.includes(name)) continue;
      const path = [...base, 'params', name];
      ctx.issues.report(
        path,
        `names no parameter of ${route} (${names.length === 0 ? 'it has none' : `it has ${names.map((n) => (n === '*' ? '*' : `:${n}`)).join(', ')}`})`,
        ctx.issues.locator.keyAt(path),
      );
    }
  }
}

/** The checks of one example at `base`: its request against the endpoint's route, its ignore list. */
function checkExample(ctx: RuleContext, base: FieldPath, example: unknown, route: string | undefined): void {
  if (!isObject(example)) return;
  checkIgnore(ctx, [...base, 'ignore'], example.ignore);
  const request = isObject(example.request) ? example.request : {};
  checkRequest(ctx, [...base, 'request'], request, route);
  if (route === undefined || typeof request.path === 'string') return;
  const names = routeParamNames(route) ?? [];
  const given = isObject(request.params) ? request.params : {};
  const missing = names.filter((n) => !Object.hasOwn(given, n));
  if (missing.length === 0) return;
  const where = isObject(example.request) ? [...base, 'request'] : base;
  const wanted = missing.map((n) => (n === '*' ? "params['*'] (the rest of the path)" : `params.${n}`)).join(', ');
  ctx.issues.report(
    where,
    `needs a value for each parameter of ${route}: ${wanted}; or a whole request.path`,
    ctx.issues.locator.keyAt(where),
  );
}

/**
 * The rules of `verify:` a schema cannot express: examples whose parameters are those of the
 * endpoint's path (or a whole path it answers), no credential headers and no literal secrets,
 * ignore entries that read as JSON paths or field names, and `verify: true` refused (it says nothing).
 */
export function checkVerify(ctx: RuleContext, data: Obj): void {
  if (isObject(data.verify)) checkIgnore(ctx, ['verify', 'ignore'], data.verify.ignore);
  if (!Array.isArray(data.endpoints)) return;
  data.endpoints.forEach((endpoint: unknown, index) => {
    if (!isObject(endpoint) || !Object.hasOwn(endpoint, 'verify')) return;
    const base: FieldPath = ['endpoints', index, 'verify'];
    const verify = endpoint.verify;
    if (verify === true) {
      ctx.issues.report(
        base,
        'must be an example ({ request, expect, ignore }), a list of examples, or false to leave the endpoint out',
      );
      return;
    }
    const path = endpoint.path;
    const route =
      typeof path === 'string' &&
      path.startsWith('/') &&
      !ctx.issues.has(['endpoints', index, 'path']) &&
      routePathProblem(path) === undefined
        ? path
        : undefined;
    if (Array.isArray(verify)) verify.forEach((example, i) => checkExample(ctx, [...base, i], example, route));
    else checkExample(ctx, base, verify, route);
  });
}
