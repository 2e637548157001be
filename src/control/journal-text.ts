import { isoTime } from '../iso-time.js';
import type { AuthVerdict, KeyMatcher } from '../pipeline/auth.js';
import type { Redactor } from '../redact/redactor.js';
import type { AnswerBody } from '../answer/answer-body.js';
import type { AnswerView } from '../wire-types.js';
import { bodySent, viewAnswer } from './journal-answer.js';
import { readQuery, requestView, streamView, type JournalNote, type RawEntry } from './journal-entry.js';

/**
 * `JSON.stringify(viewEntry(raw))`: the text a fleet host sends to Redis for every request it
 * answers (src/fleet/journal-sink.ts), ~11 µs a request when made through the view. Most of it is
 * the same from one request to the next: a client sends the same headers every time, and a fixed
 * answer is the same answer. So the text is made in parts, and each endpoint keeps its last parts
 * with what they were made from:
 *
 * - the request's headers, body, endpoint and answer name (`"headers":…,"response":…`), and its
 *   step, credential and notes (`"step":…,"notes":…`): used again while the request's header list,
 *   body, answer name, step, notes, keys and redactor are the same (its URL too when a key may come
 *   from the query); a request that broke the OpenAPI description is made whole;
 * - the answer's headers and body (`answerText`), while its header list, body, sent-or-not and
 *   redactor are the same.
 *
 * The id, time, method, path, query, status and duration are written for each request. The view is
 * not kept: a query on a fleet host reads the fleet's stream, and the journal here builds the view
 * when it is asked. test/unit/journal-entry-text.test.ts holds the text to the view's JSON.
 */
export function entryText(raw: RawEntry): string {
  if (raw.view !== undefined) return JSON.stringify(raw.view);
  const parts = requestParts(raw);
  const { scrub, isSecretQuery } = raw.redactor;
  const queryStart = raw.url.indexOf('?');
  const path = queryStart === -1 ? raw.url : raw.url.slice(0, queryStart);
  const query =
    queryStart === -1 ? '{}' : JSON.stringify(readQuery(raw.url.slice(queryStart + 1), scrub, isSecretQuery));
  const answer = answerText(raw);
  const stream = raw.stream === undefined ? '' : `,"stream":${JSON.stringify(streamView(raw.stream))}`;
  return `{"id":${num(raw.id)},"time":"${isoTime(raw.time)}","method":${JSON.stringify(raw.method)},"path":${JSON.stringify(scrub(path))},"query":${query},${parts.middle},"status":${num(raw.status)},"ms":${num(Math.round(raw.ms * 100) / 100)},${parts.tail},${answer}${stream}}`;
}

/** A number as JSON writes it (not finite: null). */
const num = (n: number): string => (Number.isFinite(n) ? String(n) : 'null');

/** An endpoint's last request parts, and what they were made from. */
interface RequestParts {
  rawHeaders: readonly string[];
  body: Buffer | undefined;
  bodyTruncated: boolean;
  response: string | null;
  step: string;
  note: JournalNote;
  key: KeyMatcher;
  previousKey: KeyMatcher | undefined;
  sessionKey: KeyMatcher | undefined;
  keyVerdict: AuthVerdict | undefined;
  redactor: Redactor;
  /** The URL, when a key may come from the query (the credential then reads it); else undefined. */
  url: string | undefined;
  /** `"headers":…,"body":…,"bodyTruncated":…,"endpoint":…,"response":…` */
  middle: string;
  /** `"step":…,"credential":…,"notes":…` (and `"violations":…`) */
  tail: string;
}
const requests = keptPerEndpoint<RequestParts>();

/** Endpoints whose last parts are kept at most (a config with more starts again). */
const KEPT = 256;

/** Each endpoint's last parts (null: no endpoint), at most {@link KEPT} endpoints. */
function keptPerEndpoint<T>(): {
  get(endpoint: string | null): T | undefined;
  set(endpoint: string | null, parts: T): void;
} {
  const map = new Map<string | null, T>();
  return {
    get: (endpoint) => map.get(endpoint),
    set(endpoint, parts) {
      if (!map.has(endpoint) && map.size >= KEPT) map.clear();
      map.set(endpoint, parts);
    },
  };
}

function requestParts(raw: RawEntry): RequestParts {
  const url = raw.key.accept?.some((source) => source.kind === 'query') ? raw.url : undefined;
  const last = requests.get(raw.endpoint);
  if (
    last !== undefined &&
    raw.violations === undefined &&
    last.redactor === raw.redactor &&
    last.key === raw.key &&
    last.previousKey === raw.previousKey &&
    last.sessionKey === raw.sessionKey &&
    last.keyVerdict === raw.keyVerdict &&
    last.response === raw.response &&
    last.step === raw.step &&
    last.bodyTruncated === raw.bodyTruncated &&
    last.url === url &&
    sameNote(last.note, raw.note) &&
    sameBody(last.body, raw.body) &&
    sameList(last.rawHeaders, raw.rawHeaders)
  )
    return last;
  const view = requestView(raw);
  const parts: RequestParts = {
    rawHeaders: raw.rawHeaders,
    body: raw.body,
    bodyTruncated: raw.bodyTruncated,
    response: raw.response,
    step: raw.step,
    note: raw.note,
    key: raw.key,
    previousKey: raw.previousKey,
    sessionKey: raw.sessionKey,
    keyVerdict: raw.keyVerdict,
    redactor: raw.redactor,
    url,
    middle: JSON.stringify({
      headers: view.headers,
      body: view.body,
      bodyTruncated: view.bodyTruncated,
      endpoint: view.endpoint,
      response: view.response,
    }).slice(1, -1),
    tail: JSON.stringify({
      step: view.step,
      credential: view.credential,
      notes: view.notes,
      violations: view.violations,
    }).slice(1, -1),
  };
  // A request with violations is not kept: its parts are its own.
  if (raw.violations === undefined) requests.set(raw.endpoint, parts);
  return parts;
}

function sameBody(a: Buffer | undefined, b: Buffer | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.equals(b));
}

function sameNote(a: JournalNote, b: JournalNote): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  return sameList(a, b);
}

/** What of a journal entry its answer part is made from. */
type AnswerOf = Pick<
  RawEntry,
  'endpoint' | 'method' | 'status' | 'answerHeaders' | 'answerBody' | 'answerBodyTruncated' | 'redactor'
>;

/** The last answer part made for an endpoint (null: no endpoint), with what it was made from. */
interface AnswerPart {
  sent: boolean;
  headers: readonly string[];
  body: AnswerBody | undefined;
  truncated: boolean;
  scrub: (text: string) => string;
  text: string;
}
const answers = keptPerEndpoint<AnswerPart>();

/**
 * The answer's part of an entry's JSON text (`"responseHeaders":{…},"responseBody":…,"responseBodyTruncated":…`,
 * as `JSON.stringify` writes the view {@link viewAnswer} makes): the endpoint's last one when it was
 * made from the same headers, body and redactor, else made now and kept for the endpoint.
 */
function answerText(raw: AnswerOf): string {
  const { endpoint, method, status, answerHeaders: headers, answerBody: body, answerBodyTruncated: truncated } = raw;
  const { scrub } = raw.redactor;
  const sent = bodySent(method, status, body);
  const last = answers.get(endpoint);
  if (
    last !== undefined &&
    last.sent === sent &&
    last.truncated === truncated &&
    last.scrub === scrub &&
    last.body === body &&
    sameList(last.headers, headers)
  )
    return last.text;
  const view = {} as AnswerView;
  viewAnswer(view, method, status, headers, body, truncated, scrub);
  const text = JSON.stringify(view).slice(1, -1);
  answers.set(endpoint, { sent, headers, body, truncated, scrub, text });
  return text;
}

/** Whether two lists hold the same values in the same order. */
function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
