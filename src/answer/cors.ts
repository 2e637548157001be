import type { IncomingMessage } from 'node:http';

/** What a preflight allows when Access-Control-Request-Headers names nothing: what clients send. */
const ALLOWED_HEADERS = 'X-API-Key, Authorization, Content-Type';
const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS';
/** Browsers hide response headers from scripts unless exposed; front ends need the limit headers. */
const EXPOSED_HEADERS = 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After';
const PREFLIGHT_MAX_AGE = '600';

/**
 * The CORS headers of an answer to a request without an echoable Origin. Shared by every such
 * answer and never mutated; not frozen, because V8's Array#concat takes a slow path for frozen
 * arrays (about 2.5× slower), and compile.ts copies it into each endpoint's precomputed headers.
 */
export const ANY_ORIGIN: readonly string[] = [
  'access-control-allow-origin',
  '*',
  'access-control-expose-headers',
  EXPOSED_HEADERS,
];

/** Visible ASCII only: anything else is not echoed back (it could not be a real origin). */
function isEchoable(value: string): boolean {
  if (value.length === 0 || value.length > 2048) return false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

/**
 * Headers every answer carries when CORS is on: the request's Origin echoed, or `*`. `exposing`
 * names the limit headers of `limits.headers` when they are not the default ones.
 */
export function corsHeaders(
  req: IncomingMessage,
  exposing?: { readonly anyOrigin: readonly string[]; readonly expose: string },
): readonly string[] {
  const origin = req.headers.origin;
  if (origin === undefined || !isEchoable(origin)) return exposing?.anyOrigin ?? ANY_ORIGIN;
  return [
    'access-control-allow-origin',
    origin,
    'vary',
    'Origin',
    'access-control-expose-headers',
    exposing?.expose ?? EXPOSED_HEADERS,
  ];
}

/** A CORS preflight: OPTIONS with Access-Control-Request-Method (answered without auth). */
export function isPreflight(req: IncomingMessage): boolean {
  return req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function isMethodToken(value: string): boolean {
  return value.length <= 32 && TOKEN.test(value);
}

/**
 * The header names of an `Access-Control-Request-Headers` value, trimmed, as the client sent them
 * (`traceparent, idempotency-key`), or undefined when it names none or is not a list of header
 * names (browsers send only names, comma-separated; anything else is not echoed back).
 */
function requestedHeaders(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let named = 0;
  for (const part of value.split(',')) {
    const name = part.trim();
    if (name === '') continue; // RFC 9110 lists may have empty elements
    if (!TOKEN.test(name)) return undefined;
    named++;
  }
  return named === 0 ? undefined : value.trim();
}

/**
 * The whole 204 preflight answer: the request's Origin (or `*`), the requested method,
 * every header named in Access-Control-Request-Headers (or the three clients send when none are
 * named), and one Vary that names exactly the request headers echoed, so a cache never serves one
 * origin's or one request's allowance to another.
 */
export function preflightHeaders(req: IncomingMessage, expose = EXPOSED_HEADERS): string[] {
  const { origin } = req.headers;
  const method = req.headers['access-control-request-method'];
  const headers = requestedHeaders(req.headers['access-control-request-headers']);
  const vary: string[] = [];
  const answer = ['access-control-allow-origin', '*'];
  if (origin !== undefined && isEchoable(origin)) {
    answer[1] = origin;
    vary.push('Origin');
  }
  if (typeof method === 'string' && isMethodToken(method)) {
    answer.push('access-control-allow-methods', method);
    vary.push('Access-Control-Request-Method');
  } else {
    answer.push('access-control-allow-methods', ALLOWED_METHODS);
  }
  if (headers !== undefined) {
    answer.push('access-control-allow-headers', headers);
    vary.push('Access-Control-Request-Headers');
  } else {
    answer.push('access-control-allow-headers', ALLOWED_HEADERS);
  }
  answer.push('access-control-max-age', PREFLIGHT_MAX_AGE, 'access-control-expose-headers', expose);
  if (vary.length > 0) answer.push('vary', vary.join(', '));
  return answer;
}
