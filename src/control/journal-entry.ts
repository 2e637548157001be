import type { AnswerBody } from '../answer/answer-body.js';
import { checkAuth, matches, type AuthHeaders, type AuthVerdict, type KeyMatcher } from '../pipeline/auth.js';
import { findCredential, sourceLabel } from '../pipeline/auth-accept.js';
import { DEFAULT_KEY_NAME, type AuthSource } from '../config/types.js';
import { viewAnswer } from './journal-answer.js';
import { isoTime } from '../iso-time.js';
import { ownField, setField } from './client-fields.js';
import { REDACTED, type Redactor } from '../redact/redactor.js';
import type { JournalEntry, JournalStep, StreamSummary, Violation } from '../wire-types.js';

export type { JournalEntry };

/** The step that answered a request. */
export type Step = JournalStep;

/**
 * What the hot path keeps of a request: references and numbers only. The redacted view
 * ({@link viewEntry}) is built when someone asks, so a request the journal only holds costs one
 * small object.
 */
/** A request's notes as the answer writer hands them over: one, or a list kept apart to the journal's `notes`. */
export type JournalNote = string | readonly string[] | undefined;

export interface RawEntry extends Pick<
  JournalEntry,
  'id' | 'method' | 'bodyTruncated' | 'endpoint' | 'response' | 'status' | 'ms' | 'step'
> {
  /** Arrival, ms since the epoch on the server's clock. */
  time: number;
  /** `req.url` as sent. */
  url: string;
  /** Node's `rawHeaders` array (names and values alternating), kept by reference. */
  rawHeaders: readonly string[];
  body: Buffer | undefined;
  note: JournalNote;
  /** The key matcher the request was checked against, and the one before the last key change. */
  key: KeyMatcher;
  previousKey: KeyMatcher | undefined;
  /** The key made for the request's session (`sessions.byKey`), which is current there too. */
  sessionKey: KeyMatcher | undefined;
  /** How the credential matched `key` when the request passed auth with it (`ok` or a key of `keys:`); undefined otherwise. */
  keyVerdict: AuthVerdict | undefined;
  /** The answer's header list as written (names and values alternating), and its body as `keptAnswerBody` keeps it. */
  answerHeaders: readonly string[];
  answerBody: AnswerBody | undefined;
  answerBodyTruncated: boolean;
  /** The redactor of the config served then (its key and the one before): scrubs what a client sent elsewhere. */
  redactor: Redactor;
  /** The request's violations of the OpenAPI description; undefined when it was not validated. */
  violations: readonly Violation[] | undefined;
  /** A streamed answer's summary. */
  stream?: StreamSummary | undefined;
  /** The built view, kept once built (an SSE stream and a query may both ask). */
  view?: JournalEntry | undefined;
}

export { REDACTED };

/**
 * The entry as JSON-ready data, with every credential redacted and the keys scrubbed everywhere, in
 * every form the client wrote them (path, query names and values, header names and values, body, notes).
 */
export function viewEntry(raw: RawEntry): JournalEntry {
  if (raw.view !== undefined) return raw.view;
  const view = requestView(raw);
  viewAnswer(
    view,
    raw.method,
    raw.status,
    raw.answerHeaders,
    raw.answerBody,
    raw.answerBodyTruncated,
    raw.redactor.scrub,
  );
  if (raw.stream !== undefined) view.stream = streamView(raw.stream);
  raw.view = view;
  return view;
}

/** The view's request part: every field but the answer's and the stream's, in the view's order. */
export function requestView(raw: RawEntry): JournalEntry {
  const { scrub, isSecretHeader, isSecretQuery } = raw.redactor;
  const headers: Record<string, string> = {};
  const authHeaders: AuthHeaders = {};
  for (let i = 0; i + 1 < raw.rawHeaders.length; i += 2) {
    const sentName = (raw.rawHeaders[i] as string).toLowerCase();
    const value = raw.rawHeaders[i + 1] as string;
    const name = isSecretHeader(sentName) ? sentName : scrub(raw.rawHeaders[i] as string).toLowerCase();
    if (name === 'x-api-key')
      authHeaders['x-api-key'] =
        authHeaders['x-api-key'] === undefined ? value : `${String(authHeaders['x-api-key'])}, ${value}`;
    else if (name === 'authorization' && authHeaders.authorization === undefined) authHeaders.authorization = value;
    const secret = isSecretHeader(name);
    const shown = secret ? REDACTED : scrub(value);
    const before = ownField(headers, name);
    setField(headers, name, before === undefined || secret ? shown : `${before}, ${shown}`);
  }
  const queryStart = raw.url.indexOf('?');
  const path = queryStart === -1 ? raw.url : raw.url.slice(0, queryStart);
  const view: JournalEntry = {
    id: raw.id,
    time: isoTime(raw.time),
    method: raw.method,
    path: scrub(path),
    query: queryStart === -1 ? {} : readQuery(raw.url.slice(queryStart + 1), scrub, isSecretQuery),
    headers,
    body: raw.body === undefined ? '' : scrub(raw.body.toString('utf8')),
    bodyTruncated: raw.bodyTruncated,
    endpoint: raw.endpoint,
    response: raw.response,
    status: raw.status,
    ms: Math.round(raw.ms * 100) / 100,
    step: raw.step,
    credential: credentialOf(authHeaders, raw),
    notes: raw.note === undefined ? [] : typeof raw.note === 'string' ? [scrub(raw.note)] : raw.note.map(scrub),
  } as JournalEntry;
  // A pointer or param may hold a name the client sent (an unknown property): scrubbed like the body.
  if (raw.violations !== undefined)
    view.violations = raw.violations.map((v) => ({
      ...v,
      pointer: scrub(v.pointer),
      param: v.param === null ? null : scrub(v.param),
      message: scrub(v.message),
    }));
  return view;
}

/** How the request presented a key, and which key it was: never the key itself. */
function credentialOf(headers: AuthHeaders, raw: RawEntry): JournalEntry['credential'] {
  if (raw.key.accept !== undefined) return acceptedCredential(raw.key.accept, raw);
  const via = credentialVia(headers);
  if (via === 'none') return { via, key: 'unknown' };
  const named = raw.key.named !== undefined || raw.previousKey?.named !== undefined;
  const current = raw.keyVerdict ?? checkAuth(headers, raw.key);
  if (current === 'ok' || typeof current === 'object') return withName({ via, key: 'current' }, current, named);
  if (raw.sessionKey !== undefined && checkAuth(headers, raw.sessionKey) === 'ok')
    return withName({ via, key: 'current' }, 'ok', named);
  const previous = raw.previousKey === undefined ? 'invalid' : checkAuth(headers, raw.previousKey);
  if (previous === 'ok' || typeof previous === 'object') return withName({ via, key: 'previous' }, previous, named);
  return { via, key: 'unknown' };
}

/** The credential with the key's name, when the config names keys (`keys:`): `default` for `apiKey`. */
function withName(
  credential: JournalEntry['credential'],
  verdict: AuthVerdict,
  named: boolean,
): JournalEntry['credential'] {
  if (!named) return credential;
  return { ...credential, keyName: typeof verdict === 'object' ? verdict.name : DEFAULT_KEY_NAME };
}

/** {@link credentialOf} for a config with `auth.accept`: the first place present decides, as for auth. */
function acceptedCredential(accept: readonly AuthSource[], raw: RawEntry): JournalEntry['credential'] {
  const headers: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.rawHeaders.length; i += 2) {
    const name = (raw.rawHeaders[i] as string).toLowerCase();
    const value = raw.rawHeaders[i + 1] as string;
    const before = ownField(headers, name);
    if (before === undefined) setField(headers, name, value);
    else if (name !== 'authorization') setField(headers, name, `${before}${name === 'cookie' ? '; ' : ', '}${value}`);
  }
  const found = findCredential(accept, { headers, url: raw.url, rawHeaders: raw.rawHeaders });
  if (found === undefined) return { via: 'none', key: 'unknown' };
  const label = sourceLabel(found.source) as Pick<JournalEntry['credential'], 'via' | 'name'>;
  const { candidate } = found;
  if (candidate === undefined) return { ...label, key: 'unknown' };
  const named = raw.key.named !== undefined || raw.previousKey?.named !== undefined;
  const current = raw.keyVerdict ?? matches(candidate, raw.key);
  if (current !== 'invalid') return withName({ ...label, key: 'current' }, current, named);
  if (raw.sessionKey !== undefined && matches(candidate, raw.sessionKey) === 'ok')
    return withName({ ...label, key: 'current' }, 'ok', named);
  const previous = raw.previousKey === undefined ? 'invalid' : matches(candidate, raw.previousKey);
  if (previous !== 'invalid') return withName({ ...label, key: 'previous' }, previous, named);
  return { ...label, key: 'unknown' };
}

/** Which header carries the credential: `X-API-Key` when it has a value, else `Authorization`. */
function credentialVia(headers: AuthHeaders): JournalEntry['credential']['via'] {
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.trim() !== '') return 'x-api-key';
  const scheme = /^[ \t]*(\S+)[ \t]+\S/.exec(headers.authorization ?? '')?.[1]?.toLowerCase();
  return scheme === 'bearer' ? 'bearer' : scheme === 'basic' ? 'basic' : 'none';
}

/** The query string as an object; a repeated name gives a list. Malformed escapes are kept as sent. */
export function readQuery(
  search: string,
  scrub: (text: string) => string,
  isSecret: (name: string) => boolean,
): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const part of search.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = scrub(decode(eq === -1 ? part : part.slice(0, eq)));
    const value = isSecret(name) ? REDACTED : scrub(eq === -1 ? '' : decode(part.slice(eq + 1)));
    const before = ownField(query, name);
    setField(query, name, before === undefined ? value : Array.isArray(before) ? [...before, value] : [before, value]);
  }
  return query;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** A stream's summary as the journal shows it: durations rounded to hundredths of a millisecond. */
export function streamView(s: StreamSummary): StreamSummary {
  const round = (ms: number): number => Math.round(ms * 100) / 100;
  return {
    events: s.events,
    sent: s.sent,
    ended: s.ended,
    firstByteMs: s.firstByteMs === null ? null : round(s.firstByteMs),
    ms: round(s.ms),
  };
}
