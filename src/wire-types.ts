// What a request's journal entry says, in the shapes the admin API sends: imported (as types) by the
// request path (src/http), the capabilities that fill these fields (src/stream, src/validate), the
// journal (src/control) and the inspector page (src/inspector/page). It imports nothing, so any
// folder — and the page, built for the browser — may name it.

/** The step that answered a request: the journal's `step`. */
export type JournalStep =
  | 'auth'
  | 'rate_limit'
  | 'quota'
  | 'match'
  | 'validation'
  | 'failure'
  | 'fault'
  | 'response'
  | 'preflight'
  | 'bad_request'
  | 'upstream';

/** How a stream ended: all its events, a fault, or the client leaving first. */
export type StreamEnd = 'complete' | 'cut' | 'reset' | 'error' | 'client';

/** What the journal keeps of a stream (its `stream` field). */
export interface StreamSummary {
  /** Events the stream had to send. */
  events: number;
  /** Events written (the error event of an `error` fault not counted). */
  sent: number;
  ended: StreamEnd;
  /** Milliseconds from the request's arrival to the head; null when the client left before it. */
  firstByteMs: number | null;
  /** Milliseconds from the request's arrival to the end. */
  ms: number;
}

/** Where in the request a violation is. */
export type ViolationPlace = 'path' | 'query' | 'header' | 'cookie' | 'body';

/** One way a request breaks the OpenAPI description. */
export interface Violation {
  in: ViolationPlace;
  /** JSON pointer inside that part of the request: `/limit` (a query parameter), `/metadata/order_id` (the body); `` for the whole body. */
  pointer: string;
  /** The parameter or body field, as a client names it (`limit`, `metadata[order_id]`); null for the whole body. */
  param: string | null;
  /** The JSON Schema keyword that failed (`type`, `required`, `minimum`, `format`…), or `contentType`, `parse`, `style` (a matrix or label path parameter not written so). */
  keyword: string;
  message: string;
}

/** The answer as a journal entry shows it (beside the request's fields). */
export interface AnswerView {
  /** Lower-case names, as written; the key's text, wherever it appears, is `"<redacted>"`. */
  responseHeaders: Record<string, string>;
  /** The first 64 KiB of the answer's body, as text ('' when none was sent). */
  responseBody: string;
  responseBodyTruncated: boolean;
}

/** A journal entry as the admin API, the programmatic API and `mockapi requests` show it, with the answer written. */
export interface JournalEntry extends AnswerView {
  id: number;
  /** ISO time the request arrived, on the server's clock. */
  time: string;
  method: string;
  /** As sent, with `/mock`, without the query string. */
  path: string;
  query: Record<string, string | string[]>;
  /** Lower-case names; credentials and cookies are `"<redacted>"`. */
  headers: Record<string, string>;
  /** The first 64 KiB of the body, as text ('' when none). */
  body: string;
  bodyTruncated: boolean;
  /** `"GET /users/:id"`, or null when no endpoint matched. */
  endpoint: string | null;
  /** The answer's name or position, `"response"` for a plain `response:`, null when none answered. */
  response: string | null;
  status: number;
  ms: number;
  step: JournalStep;
  /**
   * How the request presented a key: `x-api-key`, `bearer`, `basic`, or for the places `auth.accept`
   * adds, `header`, `query`, `scheme` or `cookie` with the `name` of the header, parameter, scheme or cookie.
   * `keyName`: which key it was (`default` for `apiKey`), given when the config lists `keys:`.
   */
  credential: {
    via: 'x-api-key' | 'bearer' | 'basic' | 'header' | 'query' | 'scheme' | 'cookie' | 'none';
    name?: string;
    key: 'current' | 'previous' | 'unknown';
    keyName?: string;
  };
  notes: string[];
  /** The request's violations of the OpenAPI description; present only when its endpoint validates requests. */
  violations?: readonly Violation[];
  /** A streamed answer: `{ events, sent, ended, firstByteMs, ms }`; absent for other answers. */
  stream?: StreamSummary;
}
