/**
 * The grammar of an endpoint path, beyond what the JSON Schema checks (a string starting with `/`
 * without `?`, `#`, `%` or whitespace):
 *
 * - segments are separated by single `/`; a trailing `/` is allowed and ignored;
 * - a segment is literal text, `*` as the very last segment, or holds parameters: `:name` (`name`
 *   is a letter or `_` followed by letters, digits or `_`, unique within the path), filling the
 *   segment (`/users/:id`) or sharing it with text (`/Accounts/:Sid.json`, `/compare/:base...:head`,
 *   `/:id-:slug`); inside a segment, text before a parameter ends with `-` or `.`, and text after one
 *   starts with `-` or `.` (where its name ends);
 * - literal text writes a `:` as `::` (`/levels::append` answers `/levels:append`), has no `*`,
 *   no control characters or `\`, and is not `.` or `..` (clients resolve those before sending).
 */

/** A piece of a path segment: literal text (with `::` already read as `:`) or a parameter. */
export type SegmentPart = { text: string } | { param: string };

const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[A-Za-z0-9_]/;

/** The pieces of one segment, or why it cannot be read. `*` is not handled here. */
export function segmentParts(segment: string): SegmentPart[] | string {
  const parts: SegmentPart[] = [];
  let text = '';
  for (let i = 0; i < segment.length;) {
    const ch = segment[i] as string;
    if (ch !== ':') {
      text += ch;
      i++;
      continue;
    }
    if (segment[i + 1] === ':') {
      text += ':';
      i += 2;
      continue;
    }
    let end = i + 1;
    if (!NAME_START.test(segment[end] ?? '')) {
      return `has an invalid parameter in \`${segment}\`: a parameter is \`:\` and a name made of letters, digits and _ (write a literal \`:\` as \`::\`)`;
    }
    while (end < segment.length && NAME_CHAR.test(segment[end] as string)) end++;
    const next = segment[end];
    if (next !== undefined && next !== '-' && next !== '.') {
      return `has the parameter \`${segment.slice(i, end)}\` followed by \`${next}\` in \`${segment}\`: text after a parameter must start with \`-\` or \`.\``;
    }
    if (text !== '' && !/[-.]$/.test(text)) {
      return `has \`:\` after \`${text}\` in \`${segment}\`: a parameter inside a segment follows \`-\` or \`.\` (write a literal \`:\` as \`::\`)`;
    }
    if (text !== '') parts.push({ text });
    text = '';
    parts.push({ param: segment.slice(i + 1, end) });
    i = end;
  }
  if (text !== '') parts.push({ text });
  return parts;
}

/** The parameter names of a path, in order (`*` for a trailing wildcard); undefined when it cannot be read. */
export function routeParamNames(path: string): string[] | undefined {
  const names: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '*') names.push('*');
    else if (segment.includes(':')) {
      const parts = segmentParts(segment);
      if (typeof parts === 'string') return undefined;
      for (const part of parts) if ('param' in part) names.push(part.param);
    }
  }
  return names;
}

// eslint-disable-next-line no-control-regex
const FORBIDDEN_IN_LITERAL = /[*\\\u0000-\u001f\u007f]/;

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
      if (!last || path.endsWith('/'))
        return 'may use `*` only as the last segment (`/files/*`), with nothing after it';
      continue;
    }
    const parts = segmentParts(segment);
    if (typeof parts === 'string') return parts;
    let literal = true;
    for (const part of parts) {
      if (!('param' in part)) continue;
      literal = false;
      if (params.has(part.param)) return `uses the parameter \`:${part.param}\` twice`;
      params.add(part.param);
    }
    if (literal && (segment === '.' || segment === '..'))
      return `must not contain a \`${segment}\` segment (clients resolve it before sending)`;
    const bad = FORBIDDEN_IN_LITERAL.exec(parts.map((p) => ('text' in p ? p.text : '')).join(''));
    if (bad !== null) {
      const ch = bad[0];
      if (ch === '*') return 'may use `*` only as a whole last segment (`/files/*`)';
      if (ch === '\\') return 'must not contain `\\`';
      return 'must not contain control characters';
    }
  }
  return undefined;
}

/**
 * The route a path answers to, for duplicate detection: parameter names erased (`/a/:id.json` →
 * `/a/:.json`) and the trailing slash dropped, so `/users/:id`, `/users/:name` and `/users/:id/` are one route.
 */
export function routeShape(path: string): string {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  if (!trimmed.includes(':')) return trimmed; // no parameter to erase
  // A name never holds `/`, so the whole path is read as its segments would be one by one.
  return trimmed.replace(PARAMETER_OR_COLON, (m) => (m === '::' ? m : ':'));
}

const PARAMETER_OR_COLON = /::|:[A-Za-z_][A-Za-z0-9_]*/g;

/** A route (`/users/:id`, `/files/*`) as a RegExp over paths written as they are (not percent-encoded). */
export function routePattern(route: string): RegExp {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const segments = route.split('/').filter((s, i, all) => s !== '' || (i > 0 && i < all.length - 1));
  const body = segments
    .map((segment, i) => {
      if (segment === '*' && i === segments.length - 1) return '(?:/.*)?';
      const parts = segmentParts(segment);
      if (typeof parts === 'string') return `/${escape(segment)}`;
      return `/${parts.map((p) => ('param' in p ? '[^/]+' : escape(p.text))).join('')}`;
    })
    .join('');
  return new RegExp(`^${body}/?$`);
}
