import type { CheckedEndpoints } from './endpoint-reuse.js';
import type { FieldPath } from './field-path.js';
import { describeValue, type IssueList } from './issues.js';
import { durationProblem, parseDuration } from './units.js';

// The kit every config rule uses (config/rules*.ts, and the rules capabilities keep in their folders,
// such as stream/rules.ts): the context rules report into, durations, and bodies JSON can carry.

/** Deeper bodies are refused: serialising them would overflow the stack. */
export const MAX_BODY_DEPTH = 1000;

export type Obj = Record<string, unknown>;

export function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function has(o: Obj, key: string): boolean {
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
  /**
   * Set for a run-time stub, whose `bodyFile` comes from a request rather than from the config's
   * author: body files must be written inside `dir` and really be there, symbolic links resolved,
   * or in one of these further folders (a test helper's copy links to the original's folder).
   */
  bodyFilesInside?: { also: readonly string[] };
  /**
   * For a run-time stub, checked as the only endpoint of a config of its own: what the served
   * config declares that the stub may name (webhook events and targets, meters, resources).
   */
  served?: ServedNames;
}

/** What a stub may name of the config it is added to (see {@link RuleContext.served}). */
export interface ServedNames {
  events: readonly string[];
  targets: readonly string[];
  meters: readonly string[];
  resources: readonly string[];
}

export function checkDuration(ctx: RuleContext, path: FieldPath, value: unknown, mustBePositive: boolean): void {
  if (ctx.issues.has(path)) return;
  const ms = parseDuration(value);
  if (ms === undefined && typeof value === 'string')
    ctx.issues.report(path, `${durationProblem(value)}, got ${describeValue(value)}`);
  else if (ms === 0 && mustBePositive) ctx.issues.report(path, `must be longer than 0, got ${describeValue(value)}`);
}

export function describeKind(value: unknown): string {
  if (typeof value !== 'object' || value === null) return `a ${typeof value}`;
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return typeof name === 'string' && name !== '' ? `a ${name}` : 'an object';
}

/**
 * Whether `value` is certainly fine as a JSON body: plain mappings, lists and finite numbers, at
 * most `depth` levels deep, within `budget` values. Allocates nothing, so the usual body costs
 * little; false means "look closer" (a problem, or shared values that would take too long this way).
 */
export function isPlainJson(value: unknown, depth: number, budget: { left: number }): boolean {
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
      return {
        path,
        message: `cannot be sent as JSON (${describeKind(value)}); use mappings, lists, strings, numbers, booleans and null`,
      };
    }
    if (depth >= MAX_BODY_DEPTH) return { path, message: `is nested more than ${MAX_BODY_DEPTH} levels deep` };
    onStack.add(value);
    stack.push({ value, path, depth, exit: true });
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--)
        stack.push({ value: value[i], path: [...path, i], depth: depth + 1, exit: false });
    } else {
      for (const [key, child] of Object.entries(value))
        stack.push({ value: child, path: [...path, key], depth: depth + 1, exit: false });
    }
  }
  return undefined;
}
