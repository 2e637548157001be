import type { AnswerBody } from '../answer/answer-body.js';
import {
  badRequestBody,
  BODY_INVALID_KEY,
  BODY_NO_KEY,
  BODY_INSUFFICIENT_QUOTA,
  BODY_QUOTA_EXCEEDED,
  BODY_RATE_LIMITED,
  BODY_SIMULATED_FAILURE,
  HEADERS_INVALID_KEY,
  HEADERS_NO_KEY,
  meterLimitedBody,
  notFoundBody,
  payloadTooLargeBody,
} from '../answer/responses.js';
import { ANY_ORIGIN } from '../answer/cors.js';
import type { ErrorKind } from '../config/types.js';
import { BODY_STORE_UNAVAILABLE } from '../pipeline/limits.js';
import type { JournalStep } from '../wire-types.js';
import type { Exchange } from './exchange.js';

/**
 * One of mockapi's own refusals: the step the journal names, the status, the default body (bytes,
 * or made from the request and a detail), the note of the log line and journal entry.
 * `errors:` may reshape any of them (its key is the kind).
 */
export interface Refusal {
  readonly step: JournalStep;
  readonly status: number;
  readonly body: AnswerBody | ((x: Exchange, detail: string) => AnswerBody);
  /** The note when the step gives none; undefined: no note. */
  readonly note: string | undefined;
  /** The whole header list of the default answer, made once (a 401's challenge); else the JSON answer's. */
  readonly headers?: readonly string[];
  /** {@link Refusal.headers} with the `*` CORS headers, for a request without an Origin to echo. */
  readonly anyOrigin?: readonly string[];
  /** Whether the request passed auth when refused (`errors:` templates read `key.name`). */
  readonly authenticated: boolean;
}

/** The refusals of the request path by kind (the kinds of `errors:` that the core steps give). */
export type RefusalKind = Exclude<ErrorKind, 'upstreamUnreachable' | 'upstreamTimeout'>;

/** The refusals a meter gives (src/http/steps/limits-meters.ts), with its sentence as their detail. */
export const REFUSED_BY_METER: ReadonlySet<RefusalKind> = new Set([
  'rateLimited',
  'quotaExceeded',
  'insufficientQuota',
]);

/** Every refusal of the core steps, in one table: `reply.refuse(x, kind)` writes one. */
export const REFUSALS: Readonly<Record<RefusalKind, Refusal>> = {
  badRequest: {
    step: 'bad_request',
    status: 400,
    body: (_x, detail) => badRequestBody(detail),
    note: 'bad request',
    authenticated: false,
  },
  payloadTooLarge: {
    step: 'bad_request',
    status: 413,
    body: (x) => payloadTooLargeBody(x.compiled.config.server.maxBodySize),
    note: 'body too large',
    authenticated: false,
  },
  missingKey: {
    step: 'auth',
    status: 401,
    body: BODY_NO_KEY,
    note: 'no API key',
    headers: HEADERS_NO_KEY,
    anyOrigin: HEADERS_NO_KEY.concat(ANY_ORIGIN),
    authenticated: false,
  },
  invalidKey: {
    step: 'auth',
    status: 401,
    body: BODY_INVALID_KEY,
    note: 'invalid API key',
    headers: HEADERS_INVALID_KEY,
    anyOrigin: HEADERS_INVALID_KEY.concat(ANY_ORIGIN),
    authenticated: false,
  },
  storeUnavailable: {
    step: 'rate_limit',
    status: 503,
    body: BODY_STORE_UNAVAILABLE,
    note: 'limit store unavailable',
    authenticated: true,
  },
  // A meter's refusal gives a detail (what was asked of which meter); the rate window's and month's
  // give none. A full meter window answers as the rate limit does, word for word; a reserve that can
  // never fit says so in its message (as OpenAI answers a prompt over its tokens per minute).
  rateLimited: {
    step: 'rate_limit',
    status: 429,
    body: (x, detail) =>
      detail !== '' && x.verdict?.meter?.why === 'never' ? meterLimitedBody(detail) : BODY_RATE_LIMITED,
    note: 'rate limited',
    authenticated: true,
  },
  quotaExceeded: {
    step: 'quota',
    status: 429,
    // A spent meter answers as the monthly quota does, word for word (`exhausted: quotaExceeded`).
    body: BODY_QUOTA_EXCEEDED,
    note: 'quota exceeded',
    authenticated: true,
  },
  insufficientQuota: {
    step: 'quota',
    status: 429,
    body: BODY_INSUFFICIENT_QUOTA,
    note: 'quota exceeded',
    authenticated: true,
  },
  notFound: {
    step: 'match',
    status: 404,
    body: (x) => notFoundBody(x.method, x.mockPath),
    note: undefined,
    authenticated: true,
  },
  simulatedFailure: {
    step: 'failure',
    status: 500,
    body: BODY_SIMULATED_FAILURE,
    note: 'simulated failure',
    authenticated: true,
  },
};
