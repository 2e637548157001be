import { routeParamNames, segmentParts } from '../route-path.js';
import type { VerifyExample } from '../config/types-verify.js';

/** One example as it goes on the wire: the same for the real API and the mock, but for their credentials and base paths. */
export interface ExampleRequest {
  method: string;
  /** The path under the base path, percent-encoded per segment (`/users/42`). */
  path: string;
  /** `?a=1&b=2`, or ''. */
  query: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/** Characters a path segment may hold as they are (RFC 3986 sub-delims, `:` and `@`). */
const SEGMENT_SAFE = /%(3A|40|21|24|26|27|28|29|2A|2B|2C|3B|3D)/g;

/** One path segment, percent-encoded where it must be. */
export function encodeSegment(text: string): string {
  return encodeURIComponent(text).replace(SEGMENT_SAFE, (m) => decodeURIComponent(m));
}

/** The parameters of `route` an example must give (`params`), when it gives no whole `path`. */
export function missingParams(route: string, example: VerifyExample): string[] {
  if (example.request.path !== undefined) return [];
  return (routeParamNames(route) ?? []).filter((name) => !Object.hasOwn(example.request.params, name));
}

/** The example's path: its `path`, or the route with its parameters filled in; percent-encoded per segment. */
export function examplePath(route: string, example: VerifyExample): string {
  const { params, path } = example.request;
  if (path !== undefined) return path.split('/').map(encodeSegment).join('/');
  const segments = route.split('/').map((segment) => {
    if (segment === '*') return (params['*'] ?? '').split('/').map(encodeSegment).join('/');
    const parts = segmentParts(segment);
    if (typeof parts === 'string') return segment;
    return parts.map((p) => ('param' in p ? encodeSegment(params[p.param] ?? '') : encodeSegment(p.text))).join('');
  });
  const joined = segments.join('/');
  return joined.length > 1 && joined.endsWith('/') ? joined.slice(0, -1) : joined;
}

/** The request of an example of the endpoint `method route`: path, query, headers and body (JSON unless text). */
export function exampleRequest(method: string, route: string, example: VerifyExample): ExampleRequest {
  const query = new URLSearchParams(example.request.query).toString();
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(example.request.headers)) headers[name.toLowerCase()] = value;
  const out: ExampleRequest = {
    method,
    path: examplePath(route, example),
    query: query === '' ? '' : `?${query}`,
    headers,
  };
  if (example.request.hasBody) {
    const { body } = example.request;
    const text = typeof body === 'string';
    out.body = Buffer.from(text ? body : JSON.stringify(body ?? null), 'utf8');
    headers['content-type'] ??= text ? 'text/plain; charset=utf-8' : 'application/json';
  }
  return out;
}
