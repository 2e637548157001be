import type { IncomingMessage } from 'node:http';

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

/** Headers every answer carries when CORS is on: the request's Origin echoed, or `*`. */
export function corsHeaders(req: IncomingMessage): readonly string[] {
  const origin = req.headers.origin;
  if (origin === undefined || !isEchoable(origin)) return ANY_ORIGIN;
  return ['access-control-allow-origin', origin, 'vary', 'Origin', 'access-control-expose-headers', EXPOSED_HEADERS];
}

/** A CORS preflight: OPTIONS with Access-Control-Request-Method (answered without auth). */
export function isPreflight(req: IncomingMessage): boolean {
  return req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
}

function isToken(value: string): boolean {
  return /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}$/.test(value);
}

/** The 204 preflight answer: the requested method and the three headers clients send. */
export function preflightHeaders(req: IncomingMessage): string[] {
  const requested = req.headers['access-control-request-method'];
  const methods = typeof requested === 'string' && isToken(requested) ? requested : ALLOWED_METHODS;
  return [
    'access-control-allow-methods',
    methods,
    'access-control-allow-headers',
    ALLOWED_HEADERS,
    'access-control-max-age',
    PREFLIGHT_MAX_AGE,
  ];
}
