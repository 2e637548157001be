import type { Violation, ViolationPlace } from '../wire-types.js';

export type { Violation, ViolationPlace };

const PLACES: readonly ViolationPlace[] = ['path', 'query', 'header', 'cookie', 'body'];

/** Violations in a fixed order (place, pointer, keyword, message), repeats dropped: the same on every run. */
export function sortViolations(list: Violation[]): Violation[] {
  const seen = new Set<string>();
  const unique = list.filter((v) => {
    const key = `${v.in}\n${v.pointer}\n${v.keyword}\n${v.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  return unique.sort(
    (a, b) =>
      PLACES.indexOf(a.in) - PLACES.indexOf(b.in) ||
      cmp(a.pointer, b.pointer) ||
      cmp(a.keyword, b.keyword) ||
      cmp(a.message, b.message),
  );
}

/** How a violation names its place: `query parameter limit`, `header x-id`, `body field amount`. */
export const PLACE_LABEL: Record<ViolationPlace, string> = {
  path: 'path parameter',
  query: 'query parameter',
  header: 'header',
  cookie: 'cookie',
  body: 'body field',
};

/** `/metadata/order_id` → `metadata[order_id]`; `` → null. */
export function paramOf(pointer: string): string | null {
  if (pointer === '') return null;
  const [first = '', ...rest] = pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  return first + rest.map((s) => `[${s}]`).join('');
}

/** `a/b` → `a~1b` (a JSON pointer segment). */
export function pointerSegment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Header a reported request's answer carries: how many violations it had. */
export const VIOLATIONS_HEADER = 'x-mockapi-violations';

/**
 * `extra` (the CORS headers every answer to the request carries) plus `X-Mockapi-Violations: <count>`,
 * exposed to scripts on other origins beside the headers CORS already exposes.
 */
export function withViolationsHeader(extra: readonly string[], count: number): string[] {
  const out = extra.slice();
  for (let i = 0; i + 1 < out.length; i += 2) {
    if (out[i] === 'access-control-expose-headers') out[i + 1] = `${out[i + 1]}, X-Mockapi-Violations`;
  }
  out.push(VIOLATIONS_HEADER, String(count));
  return out;
}
