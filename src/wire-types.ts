// What a request's journal entry says, in the shapes the admin API sends: imported (as types) by the
// request path (src/http), the capabilities that fill these fields (src/stream, src/validate) and
// the journal (src/control). It imports nothing, so any folder may name it.

/** The step that answered a request: the journal's `step`. */
export type JournalStep = 'auth' | 'rate_limit' | 'quota' | 'match' | 'validation' | 'failure' | 'fault' | 'response' | 'preflight' | 'bad_request' | 'upstream';

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
  /** The JSON Schema keyword that failed (`type`, `required`, `minimum`, `format`…), or `contentType`, `parse`. */
  keyword: string;
  message: string;
}
