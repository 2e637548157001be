/**
 * The grammar of a collection's `path:` (`resources:`): the config's rules check it with these
 * (config/rules-resources.ts), and src/resources/paths.ts matches request paths with them. A path
 * and what a request path names under it: the collection (`/v1/customers`),
 * one object (`/v1/customers/cus_1`) or an action on one (`/v1/customers/cus_1/confirm`). Paths
 * take parameters as whole segments only (`/repos/:owner/:repo/issues`); the values of those
 * parameters say which part of the collection a request works on (the issues of one repository).
 */

/** A parameter segment (`:owner`): parameters take whole segments. */
export const PARAM = /^:([A-Za-z_][A-Za-z0-9_]*)$/;

/** The segments of a path without the leading `/` and a trailing slash. */
export function segmentsOf(path: string): string[] {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed === '/' ? [] : trimmed.slice(1).split('/');
}

/** The parameter names of a collection path, in order; undefined when one shares its segment with text. */
export function collectionParams(path: string): string[] | undefined {
  const names: string[] = [];
  for (const segment of segmentsOf(path)) {
    const m = PARAM.exec(segment);
    if (m !== null) names.push(m[1] as string);
    else if (segment.includes(':')) return undefined;
  }
  return names;
}

/** The route of a collection path, parameter names erased (`/repos/:/:/issues`): two collections on one route collide. */
export function routeOf(path: string): string {
  return `/${segmentsOf(path)
    .map((s) => (PARAM.test(s) ? ':' : s))
    .join('/')}`;
}
