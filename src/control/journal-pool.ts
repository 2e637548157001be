/**
 * The journal's pooled entries: a blank entry with every field present, the fill that overwrites
 * every field with a request's (so the pool keeps one shape), the release that lets a clear free
 * what they point at, and the copy for whoever keeps an entry past the call that gave it.
 */
import type { KeyMatcher } from '../pipeline/auth.js';
import { keptAnswerBody } from './journal-answer.js';
import { NO_REDACTOR } from '../redact/redactor.js';
import type { JournalNote, RawEntry } from './journal-entry.js';
import type { JournalSource } from './journal.js';

const NO_HEADERS: readonly string[] = [];

const NO_MATCHER: KeyMatcher = { digest: '', short: '' };

/**
 * Fills `entry` with the request's fields: every field written, so the pool keeps one shape.
 * `now` is the clock's reading as it is recorded, `previousKey` the journal's.
 */
export function fillEntry(
  entry: RawEntry,
  x: JournalSource,
  status: number,
  note: JournalNote,
  ms: number,
  id: number,
  now: number,
  previousKey: KeyMatcher | undefined,
): RawEntry {
  entry.id = id;
  entry.time = now - ms;
  entry.method = x.method;
  entry.url = x.req.url ?? '/';
  entry.rawHeaders = x.req.rawHeaders;
  entry.body = x.journalBody;
  entry.bodyTruncated = x.bodyTruncated;
  entry.endpoint = x.endpoint === undefined ? null : x.endpoint.key;
  entry.response = x.answer;
  entry.status = status;
  entry.ms = ms;
  entry.step = x.step;
  entry.violations = x.violations;
  entry.note = note;
  entry.key = x.compiled.key;
  entry.previousKey = previousKey;
  entry.sessionKey = x.scope?.key;
  entry.keyVerdict = x.keyVerdict;
  // A copy: a fixed answer's list is rewritten in place by the next answer (its RateLimit-* values).
  entry.answerHeaders = x.answerHeaders === undefined ? NO_HEADERS : x.answerHeaders.slice();
  const kept = keptAnswerBody(x.answerBody);
  entry.answerBody = kept;
  entry.answerBodyTruncated = kept !== x.answerBody;
  entry.redactor = x.compiled.redactor;
  entry.stream = x.stream;
  entry.view = undefined;
  return entry;
}

/** A copy of `entry` for whoever keeps it after the call that gave it: the journal reuses its entries. */
export function copyEntry(entry: RawEntry): RawEntry {
  return { ...entry };
}

/** An entry with every field present (one hidden class for the whole pool) and nothing in it. */
export function blankEntry(): RawEntry {
  return {
    id: 0,
    time: 0,
    method: '',
    url: '',
    rawHeaders: NO_HEADERS,
    body: undefined,
    bodyTruncated: false,
    endpoint: null,
    response: null,
    status: 0,
    ms: 0,
    step: 'response',
    violations: undefined,
    note: undefined,
    key: NO_MATCHER,
    previousKey: undefined,
    sessionKey: undefined,
    keyVerdict: undefined,
    answerHeaders: NO_HEADERS,
    answerBody: undefined,
    answerBodyTruncated: false,
    redactor: NO_REDACTOR,
    view: undefined,
  };
}

/** Drops what a pooled entry points at (a request's headers and body), so a clear frees them. */
export function release(entry: RawEntry): void {
  entry.rawHeaders = NO_HEADERS;
  entry.body = undefined;
  entry.answerHeaders = NO_HEADERS;
  entry.answerBody = undefined;
  entry.view = undefined;
}
