import { checkDuration, type RuleContext } from './rule-kit.js';
import { DEFAULT_KEY_NAME } from './types.js';

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The rules of `keys:`, `plans:` and `endpoints[].limits` beyond the schema: every name and every
 * key unique (`apiKey` is the key named `default`), each `plan` named under `plans:`, and each
 * window a positive duration. A repeated key is reported by position, never by its text.
 */
export function checkKeys(ctx: RuleContext, data: Obj): void {
  const plans = isObject(data.plans) ? data.plans : {};
  for (const [name, plan] of Object.entries(plans)) {
    if (isObject(plan) && isObject(plan.rateLimit) && plan.rateLimit.window !== undefined)
      checkDuration(ctx, ['plans', name, 'rateLimit', 'window'], plan.rateLimit.window, true);
  }
  if (Array.isArray(data.endpoints)) {
    data.endpoints.forEach((endpoint, i) => {
      if (!isObject(endpoint) || !isObject(endpoint.limits) || !isObject(endpoint.limits.rateLimit)) return;
      if (endpoint.limits.rateLimit.window !== undefined)
        checkDuration(ctx, ['endpoints', i, 'limits', 'rateLimit', 'window'], endpoint.limits.rateLimit.window, true);
    });
  }
  if (!Array.isArray(data.keys)) return;
  const names = new Map<string, number>();
  const keys = new Map<string, string>();
  if (typeof data.apiKey === 'string') keys.set(data.apiKey, 'apiKey');
  data.keys.forEach((item, i) => {
    if (!isObject(item)) return;
    const { name, key, plan } = item;
    if (typeof name === 'string' && !ctx.issues.has(['keys', i, 'name'])) {
      const first = names.get(name);
      if (name === DEFAULT_KEY_NAME)
        ctx.issues.report(
          ['keys', i, 'name'],
          `"${DEFAULT_KEY_NAME}" is the name of apiKey; give this key another name`,
        );
      else if (first !== undefined)
        ctx.issues.report(
          ['keys', i, 'name'],
          `"${name}" is already the name of keys[${first}]; each key needs its own name`,
        );
      else names.set(name, i);
    }
    if (typeof key === 'string' && !ctx.issues.has(['keys', i, 'key'])) {
      const first = keys.get(key);
      if (first !== undefined)
        ctx.issues.report(['keys', i, 'key'], `is the same key as ${first}; each key must be different`);
      else keys.set(key, `keys[${i}]`);
    }
    if (
      typeof plan === 'string' &&
      !ctx.issues.has(['keys', i, 'plan']) &&
      !Object.prototype.hasOwnProperty.call(plans, plan)
    ) {
      const known = Object.keys(plans);
      ctx.issues.report(
        ['keys', i, 'plan'],
        `names no plan under plans: ${JSON.stringify(plan)}${known.length === 0 ? ' (plans: lists none)' : ` (plans: ${known.join(', ')})`}`,
      );
    }
  });
}
