import type { AnswerBody } from '../answer/answer-body.js';
import type { AnswerView } from '../wire-types.js';
import { ownField, setField } from './client-fields.js';

export type { AnswerView };

/** Answer bodies are kept up to this many bytes, as request bodies are; the rest is `responseBodyTruncated`. */
export const JOURNAL_ANSWER_LIMIT = 64 * 1024;

/** The 64 KiB head of each large body already cut: a fixed answer's body is one buffer sent again and again. */
const heads = new WeakMap<Buffer, Buffer>();

/**
 * What the journal keeps of an answer's body, on the request path: the body itself (a reference,
 * no copy) when it is within the limit, else a copy of its first 64 KiB — so a ring of entries
 * never holds a large rendered body alive. A fixed body's head is cut once and reused.
 * The result is `body` itself exactly when nothing was cut.
 */
export function keptAnswerBody(body: AnswerBody | undefined): AnswerBody | undefined {
  if (body === undefined) return undefined;
  if (typeof body === 'string') {
    // Up to 3 bytes a UTF-16 unit: a short string is within the limit without counting.
    if (body.length * 3 <= JOURNAL_ANSWER_LIMIT || Buffer.byteLength(body, 'utf8') <= JOURNAL_ANSWER_LIMIT) return body;
    // Only the head is encoded, into a buffer of its own: a view of the whole body's bytes would
    // keep all of them alive for as long as the entry (a 16 MiB rendered body per request).
    const head = Buffer.allocUnsafeSlow(JOURNAL_ANSWER_LIMIT);
    return head.subarray(0, head.write(body.slice(0, JOURNAL_ANSWER_LIMIT), 'utf8'));
  }
  if (body.length <= JOURNAL_ANSWER_LIMIT) return body;
  let head = heads.get(body);
  if (head === undefined) heads.set(body, (head = Buffer.from(body.subarray(0, JOURNAL_ANSWER_LIMIT))));
  return head;
}

/**
 * The answer's part of an entry's view, written into `view` (built when someone reads the entry).
 * `scrub` removes the key's text. No body for a HEAD request or a 204/304: none was sent.
 */
export function viewAnswer(
  view: AnswerView,
  method: string,
  status: number,
  headers: readonly string[],
  body: AnswerBody | undefined,
  truncated: boolean,
  scrub: (text: string) => string,
): void {
  const named: Record<string, string> = {};
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const name = (headers[i] as string).toLowerCase();
    const value = scrub(String(headers[i + 1]));
    const before = ownField(named, name);
    setField(named, name, before === undefined ? value : `${before}, ${value}`);
  }
  const sent = bodySent(method, status, body);
  view.responseHeaders = named;
  view.responseBody = sent ? scrub(typeof body === 'string' ? body : body.toString('utf8')) : '';
  view.responseBodyTruncated = sent && truncated;
}

/** Whether an answer's body was sent: none for a HEAD request or a 204/304. */
export const bodySent = (method: string, status: number, body: AnswerBody | undefined): body is AnswerBody =>
  body !== undefined && method !== 'HEAD' && status !== 204 && status !== 304;
