import type { FieldPath } from './field-path.js';
import { describeValue } from './issues.js';
import { checkDuration, type RuleContext } from './rule-kit.js';
import { parseDuration, parseFailRate } from './units.js';

/**
 * The resilience rules a schema cannot express: durations inside faults and latency shapes, a
 * shape that is exactly one of `{ min, max }` and `{ median, p99 }` in the right order, fault fields
 * that only mean something for one kind, and rates that add up to at most 1 (a request gets at most
 * one fault).
 */

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Which fault kind each kind-specific field belongs to. */
const FIELD_KIND: Record<string, string> = { after: 'hang', bytesPerSecond: 'slow', bytes: 'truncate' };

/** Checks a `faults` list at `path` (on an endpoint or a leaf). */
export function checkFaults(ctx: RuleContext, path: FieldPath, faults: unknown): void {
  if (!Array.isArray(faults)) return;
  let total = 0;
  faults.forEach((fault: unknown, i) => {
    if (!isObject(fault)) return;
    const at = [...path, i];
    const rate = parseFailRate(fault.rate);
    if (rate === undefined && typeof fault.rate === 'string' && !ctx.issues.has([...at, 'rate'])) {
      ctx.issues.report([...at, 'rate'], `must be a percentage from 0% to 100%, got ${describeValue(fault.rate)}`);
    }
    total += rate ?? 0;
    for (const [field, kind] of Object.entries(FIELD_KIND)) {
      const fieldAt = [...at, field];
      if (
        fault[field] === undefined ||
        ctx.issues.has(fieldAt) ||
        typeof fault.kind !== 'string' ||
        fault.kind === kind
      )
        continue;
      ctx.issues.report(
        fieldAt,
        `only applies to kind ${kind}, not ${fault.kind}; remove it`,
        ctx.issues.locator.keyAt(fieldAt),
      );
    }
    if (fault.after !== undefined) checkDuration(ctx, [...at, 'after'], fault.after, true);
  });
  // Summed in hundredths of a percent, so 0.1 + 0.2 + 0.7 is not refused for a rounding error.
  if (Math.round(total * 1e6) > 1e6 && !ctx.issues.has(path)) {
    ctx.issues.report(
      path,
      `rates add up to ${+(total * 100).toFixed(4)}%, more than 100% (a request gets at most one fault); lower them`,
    );
  }
}

/** Checks an endpoint's `delay`: a duration, or a latency shape. */
export function checkDelay(ctx: RuleContext, path: FieldPath, delay: unknown): void {
  if (!isObject(delay)) return checkDuration(ctx, path, delay, false);
  if (ctx.issues.has(path)) return;
  const fields = Object.keys(delay);
  for (const field of fields) checkDuration(ctx, [...path, field], delay[field], field === 'median');
  const uniform = fields.includes('min') || fields.includes('max');
  const logNormal = fields.includes('median') || fields.includes('p99');
  if (uniform === logNormal) {
    const got = fields.length === 0 ? 'an empty mapping' : `{ ${fields.join(', ')} }`;
    return ctx.issues.report(
      path,
      `must be a latency shape: either { min, max } (uniform) or { median, p99 } (log-normal), got ${got}`,
    );
  }
  const [low, high] = uniform ? ['min', 'max'] : ['median', 'p99'];
  for (const field of [low, high] as string[]) {
    if (delay[field] === undefined)
      return ctx.issues.report(path, `needs \`${field}\` beside \`${field === low ? high : low}\``);
  }
  const lowMs = parseDuration(delay[low as string]);
  const highMs = parseDuration(delay[high as string]);
  if (lowMs !== undefined && highMs !== undefined && lowMs > highMs && !ctx.issues.has([...path, high as string])) {
    ctx.issues.report(
      [...path, high as string],
      `must be at least ${low} (${describeValue(delay[low as string])}), got ${describeValue(delay[high as string])}`,
    );
  }
}

/** Checks `limits.quotaRetryAfter` when it is a duration string. */
export function checkQuotaRetryAfter(ctx: RuleContext, limits: unknown): void {
  if (!isObject(limits) || typeof limits.quotaRetryAfter !== 'string') return;
  if (limits.quotaRetryAfter === 'none' || limits.quotaRetryAfter === 'until-reset') return;
  checkDuration(ctx, ['limits', 'quotaRetryAfter'], limits.quotaRetryAfter, true);
}
