import type { FieldPath } from './field-path.js';
import { compileCostExpression } from './rules-answers.js';
import { describeValue } from './issues.js';
import { routeParamNames } from '../route-path.js';
import { checkDuration, isObject, type Obj, type RuleContext } from './rule-kit.js';
import { METER_SCALE } from './types.js';

/**
 * The rules of meters and costs beyond the schema: meter names the headers and Redis keys can
 * carry, windows that are positive durations (or `month`, `total`), limits of at least a millionth,
 * `exhausted` only on a budget, `limitHeaders` not beside `limits.headers`, and every endpoint's
 * `cost:` naming a meter some limits have, with numbers of 0 or more and expressions that compile
 * (no random values, no request number; `response` only in a settle) — each at its line and column.
 */

const METER_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

function checkMeters(ctx: RuleContext, base: FieldPath, meters: unknown, known: Set<string>): void {
  if (!isObject(meters)) return;
  for (const [name, meter] of Object.entries(meters)) {
    const path = [...base, name];
    if (!METER_NAME.test(name))
      ctx.issues.report(
        path,
        'must be named with a letter, then up to 63 letters, digits, _ or -',
        ctx.issues.locator.keyAt(path),
      );
    else known.add(name);
    if (!isObject(meter)) continue;
    const { window, limit, exhausted } = meter;
    const budget = window === 'month' || window === 'total';
    if (window !== undefined && !budget) checkDuration(ctx, [...path, 'window'], window, true);
    if (typeof limit === 'number' && !ctx.issues.has([...path, 'limit']) && Math.round(limit * METER_SCALE) < 1) {
      ctx.issues.report(
        [...path, 'limit'],
        `must be at least 0.000001 (meters count to a millionth), got ${describeValue(limit)}`,
      );
    }
    if (
      exhausted !== undefined &&
      !budget &&
      !ctx.issues.has([...path, 'exhausted']) &&
      typeof window !== 'undefined'
    ) {
      ctx.issues.report(
        [...path, 'exhausted'],
        'only means something for a meter whose window is month or total (a spent budget); a sliding window answers rateLimited when full',
      );
    }
  }
}

/** A fixed amount written as text: a number of 0 or more. */
function checkAmountText(ctx: RuleContext, path: FieldPath, text: string): void {
  const n = Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(n))
    ctx.issues.report(path, `must be a number of 0 or more, or a \${…} expression, got ${describeValue(text)}`);
  else if (n < 0) ctx.issues.report(path, `must be 0 or more, got ${describeValue(text)}`);
}

function checkAmount(
  ctx: RuleContext,
  path: FieldPath,
  value: unknown,
  settle: boolean,
  params: readonly string[] | undefined,
  scenarios: readonly string[],
): void {
  if (typeof value !== 'string' || ctx.issues.has(path)) return;
  if (!value.includes('${')) return checkAmountText(ctx, path, value);
  const compiled = compileCostExpression(value, settle, scenarios, params);
  if ('offset' in compiled) {
    ctx.issues.report(path, compiled.message, ctx.issues.locator.textAt(path, compiled.offset));
    return;
  }
  if (compiled.usesRandom)
    ctx.issues.report(
      path,
      'cannot draw random values (uuid, randomInt, fake.*): a cost must be the same for the same request',
    );
  else if (compiled.kind === 'text')
    ctx.issues.report(path, 'must be a number or one ${…} expression, not text around one');
}

function checkCost(
  ctx: RuleContext,
  index: number,
  endpoint: Obj,
  known: Set<string>,
  scenarios: readonly string[],
): void {
  const cost = endpoint.cost;
  if (!isObject(cost)) return;
  const params = typeof endpoint.path === 'string' ? routeParamNames(endpoint.path) : undefined;
  for (const [meter, value] of Object.entries(cost)) {
    const path: FieldPath = ['endpoints', index, 'cost', meter];
    if (!known.has(meter)) {
      const list = [...known];
      ctx.issues.report(
        path,
        `names no meter of limits.meters or of a plan (${list.length === 0 ? 'no meters are declared' : `meters: ${list.join(', ')}`})`,
        ctx.issues.locator.keyAt(path),
      );
    }
    if (!isObject(value)) {
      checkAmount(ctx, path, value, true, params, scenarios);
      continue;
    }
    if (value.reserve === undefined && value.settle === undefined)
      ctx.issues.report(path, 'needs reserve (charged at admission), settle (charged after the answer) or both');
    checkAmount(ctx, [...path, 'reserve'], value.reserve, false, params, scenarios);
    checkAmount(ctx, [...path, 'settle'], value.settle, true, params, scenarios);
  }
}

/** Reports every meter and cost problem of `data` (already checked against the schema). */
export function checkMetersAndCosts(ctx: RuleContext, data: Obj, scenarios: readonly string[]): void {
  const known = new Set<string>(ctx.served?.meters);
  if (isObject(data.limits)) checkMeters(ctx, ['limits', 'meters'], data.limits.meters, known);
  if (isObject(data.plans))
    for (const [name, plan] of Object.entries(data.plans))
      if (isObject(plan)) checkMeters(ctx, ['plans', name, 'meters'], plan.meters, known);
  if (
    data.limitHeaders !== undefined &&
    data.limitHeaders !== null &&
    isObject(data.limits) &&
    data.limits.headers !== undefined &&
    data.limits.headers !== null
  ) {
    ctx.issues.report(
      ['limitHeaders'],
      'and limits.headers both choose the limit headers; keep one (limitHeaders: ietf is limits.headers: ietf with the meters)',
    );
  }
  if (!Array.isArray(data.endpoints)) return;
  data.endpoints.forEach((endpoint, i) => {
    if (isObject(endpoint)) checkCost(ctx, i, endpoint, known, scenarios);
  });
}
