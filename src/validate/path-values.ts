/**
 * Reading a path parameter's value as its style writes it — `simple` (`5`, `1,2`), `label`
 * (`.5`, `.1.2`) and `matrix` (`;x=5`, `;x=1;x=2`) — into text, a list or an object. A value
 * without its style's start (`/d/5` for `;x=5`) is {@link UNREAD}: it is reported as a style
 * violation, not as missing.
 */
import type { ParamPlan } from './param-plan.js';

/** A `simple`-style value (path, header): arrays split at commas. */
export function simpleValue(plan: ParamPlan | undefined, raw: string): unknown {
  return plan?.isArray === true ? raw.split(',') : raw;
}

/** A path value that lacks what its style starts with (`;x=` for `matrix`, `.` for `label`): not read. */
export const UNREAD = Symbol('unread');

/** `R,100,G,200` read as `{ R: '100', G: '200' }`. */
function pairsOf(parts: string[]): Record<string, string> {
  const object = Object.create(null) as Record<string, string>;
  for (let i = 0; i + 1 < parts.length; i += 2) object[parts[i] as string] = parts[i + 1] as string;
  return object;
}

/** `R=100`, `G=200` read as `{ R: '100', G: '200' }`. */
function assignmentsOf(parts: string[]): Record<string, string> {
  const object = Object.create(null) as Record<string, string>;
  for (const part of parts) {
    const eq = part.indexOf('=');
    object[eq === -1 ? part : part.slice(0, eq)] = eq === -1 ? '' : part.slice(eq + 1);
  }
  return object;
}

/**
 * A `matrix` path value, as OpenAPI's style table writes it: `;x=5`, `;x` (empty), arrays `;x=1,2`
 * (exploded `;x=1;x=2`), objects `;x=R,100,G,200` (exploded `;R=100;G=200`).
 */
function matrixValue(plan: ParamPlan, raw: string): unknown {
  const named = `;${plan.name}`;
  if (plan.isObject && plan.explode) return raw.startsWith(';') ? assignmentsOf(raw.slice(1).split(';')) : UNREAD;
  if (raw === named) return plan.isArray ? [] : plan.isObject ? Object.create(null) : '';
  if (plan.isArray && plan.explode) {
    const items: string[] = [];
    for (const part of raw.split(';').slice(1)) {
      if (!part.startsWith(`${plan.name}=`)) return UNREAD;
      items.push(part.slice(plan.name.length + 1));
    }
    return raw.startsWith(`${named}=`) ? items : UNREAD;
  }
  if (!raw.startsWith(`${named}=`)) return UNREAD;
  const text = raw.slice(named.length + 1);
  if (plan.isArray) return text.split(',');
  return plan.isObject ? pairsOf(text.split(',')) : text;
}

/**
 * A `label` path value: `.5`, `.` (empty), arrays `.1.2` (exploded too), objects `.R.100.G.200`
 * (exploded `.R=100.G=200`). OpenAPI 3.0's table writes an unexploded list with dots, RFC 6570
 * (and later OpenAPI versions) with commas (`.1,2`): an unexploded value with a comma is split at
 * commas.
 */
function labelValue(plan: ParamPlan, raw: string): unknown {
  if (!raw.startsWith('.')) return UNREAD;
  const text = raw.slice(1);
  if (!plan.isArray && !plan.isObject) return text;
  if (text === '') return plan.isArray ? [] : Object.create(null);
  const parts = text.split(!plan.explode && text.includes(',') ? ',' : '.');
  if (plan.isArray) return parts;
  return plan.explode ? assignmentsOf(parts) : pairsOf(parts);
}

/** A path value as its style writes it (`simple`, `label` or `matrix`). */
export function pathValue(plan: ParamPlan | undefined, raw: string): unknown {
  if (plan?.style === 'matrix') return matrixValue(plan, raw);
  if (plan?.style === 'label') return labelValue(plan, raw);
  return simpleValue(plan, raw);
}
