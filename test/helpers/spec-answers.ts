// The exact answers SPEC §4 and §5.1 prescribe, written out from the SPEC (not imported from src,
// so a test compares the server with the contract, not with itself).

export const JSON_TYPE = 'application/json; charset=utf-8';
export const NO_KEY = '{"error":"Unauthorized","message":"No API key provided"}';
export const INVALID_KEY = '{"error":"Unauthorized","message":"Invalid API key"}';
/** The challenge every 401 carries (SPEC §4). */
export const CHALLENGE = 'Bearer realm="mockapi"';
/** The CORS headers every answer exposes to scripts (the limit headers). */
export const EXPOSED = 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After';

/** The 404 body for `method` and `path` (the path after `/mock`, without the query string). */
export function notFound(method: string, path: string): string {
  return JSON.stringify({ error: 'not_found', message: `No endpoint configured for ${method} ${path}` });
}
