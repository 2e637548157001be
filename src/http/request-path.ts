/** The path part of a request target, decoded enough to be matched, or why it cannot be read. */
export interface RequestPath {
  /** The path without query string or fragment, with `.` and `..` segments resolved. */
  path: string;
  error?: string;
}

const DOT_SEGMENTS = new Set(['.', '%2e', '%2E']);
const DOUBLE_DOT_SEGMENTS = new Set(['..', '.%2e', '.%2E', '%2e.', '%2E.', '%2e%2e', '%2E%2E', '%2e%2E', '%2E%2e']);

/** RFC 3986 §5.2.4 remove_dot_segments, also for percent-encoded dots (as WHATWG URL does). */
function removeDotSegments(path: string): string {
  const out: string[] = [];
  const segments = path.split('/');
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i] as string;
    const last = i === segments.length - 1;
    if (DOT_SEGMENTS.has(segment)) {
      if (last) out.push('');
    } else if (DOUBLE_DOT_SEGMENTS.has(segment)) {
      out.pop();
      if (last) out.push('');
    } else {
      out.push(segment);
    }
  }
  return '/' + out.join('/');
}

/**
 * The path of the usual request target, found in one scan: when `target` starts with `/` and has
 * no `%`, no `#` and no segment starting with `.` before its query string, its path is everything
 * before the `?`, exactly as readRequestPath would give it, with nothing to decode or resolve.
 * `undefined` for any other target: readRequestPath decides those.
 */
export function plainRequestPath(target: string): string | undefined {
  if (target.charCodeAt(0) !== 47 /* '/' */) return undefined;
  for (let i = 1; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c === 63 /* '?' */) return target.slice(0, i);
    if (c === 37 /* '%' */ || c === 35 /* '#' */) return undefined;
    if (c === 46 /* '.' */ && target.charCodeAt(i - 1) === 47) return undefined;
  }
  return target;
}

/**
 * Splits the query string off a request target and checks the path can be decoded. Matching
 * happens on the result: percent escapes must be valid UTF-8, a NUL byte is refused, and dot
 * segments are resolved so `/mock/a/../b` is `/mock/b`. Duplicate slashes and backslashes are kept
 * as they are (they match no configured path). Nothing from a request path ever reaches the file
 * system: body files come from the config only.
 */
export function readRequestPath(target: string): RequestPath {
  let end = target.length;
  const query = target.indexOf('?');
  if (query !== -1) end = query;
  const hash = target.indexOf('#');
  if (hash !== -1 && hash < end) end = hash;
  let path = end === target.length ? target : target.slice(0, end);

  if (path.charCodeAt(0) !== 47 /* '/' */) {
    // absolute-form (`GET http://host/x`) as sent to proxies; `*` (OPTIONS *) stays as it is
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
      try {
        path = new URL(path).pathname;
      } catch {
        return { path, error: 'Malformed request target' };
      }
    } else {
      return { path };
    }
  }

  if (path.includes('%')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      return { path, error: 'Malformed percent-encoding in request path' };
    }
    if (decoded.includes('\0')) return { path, error: 'Request path contains a NUL byte' };
  }
  if (path.includes('/.') || path.includes('/%2')) path = removeDotSegments(path);
  return { path };
}
