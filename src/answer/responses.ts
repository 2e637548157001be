/** The exact error bodies (401, 404, 429, 500…), encoded once. */

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
export const TEXT_CONTENT_TYPE = 'text/plain; charset=utf-8';

function encode(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

export const BODY_NO_KEY = encode({ error: 'Unauthorized', message: 'No API key provided' });
export const BODY_INVALID_KEY = encode({ error: 'Unauthorized', message: 'Invalid API key' });
export const BODY_RATE_LIMITED = encode({ error: 'Too many requests', message: 'Rate limit exceeded' });
export const BODY_QUOTA_EXCEEDED = encode({ error: 'Monthly request quota exceeded', code: 'QUOTA_EXCEEDED' });
/** OpenAI's answer to a request once the account's budget is spent (`errors.insufficientQuota`'s default). */
export const BODY_INSUFFICIENT_QUOTA = encode({
  error: {
    message:
      'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.',
    type: 'insufficient_quota',
    param: null,
    code: 'insufficient_quota',
  },
});
export const BODY_SIMULATED_FAILURE = encode({ error: 'simulated_failure', message: 'Random failure triggered' });

/**
 * The challenge every 401 carries (RFC 9110 requires one). Bearer, not Basic: a Basic
 * challenge makes browsers open a login dialog over the front end calling the mock.
 */
export const WWW_AUTHENTICATE = 'Bearer realm="mockapi"';

/** The complete header list of a 401 with `body`, built once: a 401 answer builds none. */
function unauthorizedHeaders(body: Buffer): string[] {
  return [
    'content-type',
    JSON_CONTENT_TYPE,
    'content-length',
    String(body.length),
    'www-authenticate',
    WWW_AUTHENTICATE,
  ];
}

/** Headers of the 401 "No API key provided" (before any CORS headers). */
export const HEADERS_NO_KEY = unauthorizedHeaders(BODY_NO_KEY);
/** Headers of the 401 "Invalid API key" (before any CORS headers). */
export const HEADERS_INVALID_KEY = unauthorizedHeaders(BODY_INVALID_KEY);

export function notFoundBody(method: string, path: string): Buffer {
  return encode({ error: 'not_found', message: `No endpoint configured for ${method} ${path}` });
}

/** The 429 of a request whose reserve can never fit a meter: the rate-limit body saying so. */
export function meterLimitedBody(message: string): Buffer {
  return encode({ error: 'Too many requests', message });
}

export function badRequestBody(message: string): Buffer {
  return encode({ error: 'bad_request', message });
}

export function payloadTooLargeBody(limit: number): Buffer {
  return encode({ error: 'payload_too_large', message: `Request body exceeds the limit of ${limit} bytes` });
}

/** The 500 of an answer that could not be made: a bug (see the server log), or `message` when the client should read why. */
export function internalErrorBody(message = 'mockapi failed to answer this request; see the server log'): Buffer {
  return encode({ error: 'internal_error', message });
}

export function healthBody(revision: string, endpoints: number): Buffer {
  return encode({ status: 'ok', revision, endpoints });
}
