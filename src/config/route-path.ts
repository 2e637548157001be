/**
 * The grammar of an endpoint path, beyond what the JSON Schema checks (a string starting with `/`
 * without `?`, `#`, `%` or whitespace):
 *
 * - segments are separated by single `/`; a trailing `/` is allowed and ignored;
 * - a segment is literal text, a parameter `:name` (the whole segment; `name` is a letter or `_`
 *   followed by letters, digits or `_`, unique within the path), or `*` as the very last segment;
 * - literal text has no `:` or `*` (the router would read them as parameters or wildcards), no
 *   control characters or `\`, and is not `.` or `..` (clients resolve those before sending).
 */

const PARAM_RE = /^:[A-Za-z_][A-Za-z0-9_]*$/;
// eslint-disable-next-line no-control-regex
const FORBIDDEN_IN_LITERAL = /[:*\\\u0000-\u001f\u007f]/;

/** Why `path` is not a valid endpoint path, or `undefined` when it is. Assumes it starts with `/`. */
export function routePathProblem(path: string): string | undefined {
  if (path === '/') return undefined;
  const segments = path.slice(1).split('/');
  if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop(); // trailing slash
  const params = new Set<string>();
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as string;
    const last = i === segments.length - 1;
    if (segment === '') return 'must not contain an empty segment (`//`)';
    if (segment === '*') {
      if (!last || path.endsWith('/')) return 'may use `*` only as the last segment (`/files/*`), with nothing after it';
      continue;
    }
    if (segment.startsWith(':')) {
      if (!PARAM_RE.test(segment)) {
        return `has an invalid parameter \`${segment}\`: a parameter is \`:\` and a name made of letters, digits and _ that fills its whole segment`;
      }
      if (params.has(segment)) return `uses the parameter \`${segment}\` twice`;
      params.add(segment);
      continue;
    }
    if (segment === '.' || segment === '..') return `must not contain a \`${segment}\` segment (clients resolve it before sending)`;
    const bad = FORBIDDEN_IN_LITERAL.exec(segment);
    if (bad !== null) {
      const ch = bad[0];
      if (ch === '*') return 'may use `*` only as a whole last segment (`/files/*`)';
      if (ch === ':') return 'may use `:` only to start a parameter segment (`/users/:id`)';
      if (ch === '\\') return 'must not contain `\\`';
      return 'must not contain control characters';
    }
  }
  return undefined;
}

/**
 * The route a path answers to, for duplicate detection: parameter names erased and the trailing
 * slash dropped, so `/users/:id`, `/users/:name` and `/users/:id/` are one route.
 */
export function routeShape(path: string): string {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed
    .split('/')
    .map((segment) => (segment.startsWith(':') ? ':' : segment))
    .join('/');
}
