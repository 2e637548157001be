import { isEnumField, isTokenValue } from './volatile.js';

/** As shape.ts: deeper values are not compared (the full comparison decides there). */
const MAX_DEPTH = 128;

const kindOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/**
 * Whether two JSON values certainly have the same shape, worked out without building one: the same
 * types everywhere, objects with the same field names, arrays of the same length item by item, and
 * no string the comparison could read as a new enum value (a differing enum-like value under an
 * enum-like field name). True means the full comparison (shapeOf and compareShapes) would find no
 * change, whatever `verify.ignore` says, since ignoring only takes changes away; false means only
 * "not certain": the full comparison decides. Most examples of a run are the same, and this walk
 * allocates nothing.
 */
export function certainlySameShape(
  mock: unknown,
  upstream: unknown,
  name: string | undefined = undefined,
  depth = 0,
): boolean {
  if (depth >= MAX_DEPTH) return false;
  const kind = kindOf(mock);
  if (kind !== kindOf(upstream)) return false;
  if (kind === 'string') return mock === upstream || !isEnumField(name) || !isTokenValue(upstream as string);
  if (kind === 'array') {
    const m = mock as unknown[];
    const u = upstream as unknown[];
    if (m.length !== u.length) return false;
    for (let i = 0; i < m.length; i++) if (!certainlySameShape(m[i], u[i], name, depth + 1)) return false;
    return true;
  }
  if (kind !== 'object') return true;
  const m = mock as Record<string, unknown>;
  const u = upstream as Record<string, unknown>;
  let count = 0;
  for (const key in m) {
    if (!Object.hasOwn(m, key)) continue;
    count++;
    if (!Object.hasOwn(u, key) || !certainlySameShape(m[key], u[key], key, depth + 1)) return false;
  }
  for (const key in u) if (Object.hasOwn(u, key)) count--;
  return count === 0;
}
