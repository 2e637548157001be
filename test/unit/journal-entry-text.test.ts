// A fleet host's journal text (entryText, control/journal-text.ts) is exactly the JSON of the
// entry's view, though it keeps each endpoint's answer part and uses it again: for any sequence of
// entries — endpoints alternating, answers whose headers, body, status or method change under the
// same endpoint, HEAD and 204 answers, streams, violations, keys in headers and answers, a redactor
// replaced (a rotated key) — the text is the view's, field for field and in its order.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { viewEntry, type RawEntry } from '../../src/control/journal-entry.js';
import { entryText } from '../../src/control/journal-text.js';
import { createKeyMatcher } from '../../src/pipeline/auth.js';
import { createRedactor } from '../../src/redact/redactor.js';

const KEY = 'mk_entryText000000000000000000001';
const NEXT = 'mk_entryText000000000000000000002';
const redactors = [createRedactor([KEY]), createRedactor([NEXT, KEY])];
const keys = [
  createKeyMatcher(KEY),
  createKeyMatcher(NEXT),
  // A key that may come from the query: the credential then reads the URL.
  createKeyMatcher(KEY, undefined, [{ kind: 'x-api-key' }, { kind: 'query', name: 'api_key' }]),
];

/** A fixed answer's body: the same string object each time it is drawn, as a config's is. */
const BODIES = [
  '{"id":42}',
  `{"leak":"${KEY}","next":"${NEXT}"}`,
  Buffer.from('{"bytes":true}'),
  'line\nbreak "quoted" \u2028',
  '',
];
const HEADERS = [
  ['content-type', 'application/json', 'content-length', '9'],
  ['Content-Type', 'text/plain', 'X-Echo', KEY, 'x-echo', 'two', 'x-next', NEXT],
  ['RateLimit-Remaining', '4', 'RateLimit-Limit', '5'],
  [],
];

const raw = fc.record({
  endpoint: fc.constantFrom<string | null>('GET /a', 'GET /a', 'POST /b', null),
  method: fc.constantFrom('GET', 'POST', 'HEAD'),
  status: fc.constantFrom(200, 201, 204, 304, 429),
  // Mostly the same few: a cached part is met again often, with one thing changed.
  headers: fc.constantFrom(0, 0, 1, 1, 2, 3),
  // A copy now and then: equal lists, another array (as the journal keeps them).
  copy: fc.boolean(),
  // A fresh body string now and then (a rendered answer), equal or not to a fixed one.
  body: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(0, 1, 1, 2, 3, 4) },
    { weight: 1, arbitrary: fc.constant(-1) },
    { weight: 1, arbitrary: fc.string().map((s) => `{"n":${JSON.stringify(s)}}`) },
  ),
  truncated: fc.boolean(),
  redactor: fc.integer({ min: 0, max: 1 }),
  key: fc.constantFrom(0, 0, 1, 2),
  previousKey: fc.constantFrom<number | undefined>(undefined, undefined, 1),
  sessionKey: fc.constantFrom<number | undefined>(undefined, undefined, 1),
  verdict: fc.constantFrom<'ok' | undefined>(undefined, 'ok'),
  step: fc.constantFrom('response', 'response', 'auth'),
  response: fc.constantFrom<string | null>('response', 'response', null, 'second'),
  postBody: fc.constantFrom<string | undefined>(undefined, 'a=1', `k=${KEY}`),
  bodyTruncated: fc.boolean(),
  // Mostly one of a few lists (a client sends the same headers each time), now and then any.
  requestHeaders: fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom(['x-api-key', KEY, 'accept', '*/*'], ['Authorization', `Bearer ${NEXT}`], []),
    },
    {
      weight: 1,
      arbitrary: fc.array(fc.constantFrom('x-api-key', KEY, 'accept', '*/*', 'Authorization', `Bearer ${NEXT}`), {
        maxLength: 6,
      }),
    },
  ),
  url: fc.constantFrom(
    '/mock/a',
    '/mock/a',
    '/mock/a2',
    `/mock/a?k=${KEY}&x=1`,
    `/mock/a?api_key=${KEY}`,
    `/mock/a?api_key=${NEXT}`,
    '/mock/b?x=%41&x=2',
  ),
  stream: fc.boolean(),
  violations: fc.boolean(),
  // A list of notes is a new array each time, equal or not.
  note: fc.constantFrom<string | readonly string[] | undefined>(
    undefined,
    undefined,
    'slow',
    ['a', `has ${KEY}`],
    ['a'],
  ),
});

type Drawn = typeof raw extends fc.Arbitrary<infer T> ? T : never;

function entryOf(r: Drawn, id: number): RawEntry {
  const headers = HEADERS[r.headers]!;
  const body = typeof r.body === 'string' ? r.body : r.body === -1 ? undefined : BODIES[r.body];
  return {
    id,
    time: Date.parse('2026-06-01T00:00:00Z') + id * 1.5,
    method: r.method,
    url: r.url,
    rawHeaders: r.requestHeaders.length % 2 === 0 ? [...r.requestHeaders] : r.requestHeaders.slice(1),
    body: r.postBody === undefined ? undefined : Buffer.from(r.postBody),
    bodyTruncated: r.bodyTruncated,
    endpoint: r.endpoint,
    response: r.response,
    status: r.status,
    ms: 1.23456,
    step: r.step as RawEntry['step'],
    violations: r.violations ? [{ in: 'body', pointer: `/${KEY}`, param: null, message: 'no' } as never] : undefined,
    note: Array.isArray(r.note) ? [...r.note] : r.note,
    key: keys[r.key]!,
    previousKey: r.previousKey === undefined ? undefined : keys[r.previousKey],
    sessionKey: r.sessionKey === undefined ? undefined : keys[r.sessionKey],
    keyVerdict: r.verdict,
    answerHeaders: r.copy ? headers.slice() : headers,
    answerBody: body,
    answerBodyTruncated: r.truncated,
    redactor: redactors[r.redactor]!,
    stream: r.stream ? { events: 3, sent: 2, ended: 'complete', firstByteMs: 1.23456, ms: 9.87654 } : undefined,
    view: undefined,
  };
}

describe('a fleet host’s journal text', () => {
  test('is the JSON of the entry’s view, whatever came before it', () => {
    fc.assert(
      fc.property(fc.array(raw, { minLength: 1, maxLength: 30 }), (list) => {
        list.forEach((r, i) => {
          const text = entryText(entryOf(r, i + 1));
          expect(text).toBe(JSON.stringify(viewEntry(entryOf(r, i + 1))));
        });
      }),
      { numRuns: 200 },
    );
  });

  test('is the JSON of the entry’s view when one thing changes from the request before', () => {
    // Each entry is the one before with one field drawn again: every part kept is met again with
    // exactly one of the things it was made from changed (or none).
    const fields = Object.keys(fc.sample(raw, 1)[0]!) as (keyof Drawn)[];
    fc.assert(
      fc.property(raw, fc.array(fc.tuple(fc.constantFrom(...fields), raw), { maxLength: 40 }), (first, changes) => {
        let r = first;
        const check = (id: number) => expect(entryText(entryOf(r, id))).toBe(JSON.stringify(viewEntry(entryOf(r, id))));
        check(1);
        changes.forEach(([field, drawn], i) => {
          r = { ...r, [field]: drawn[field] };
          check(i + 2);
        });
      }),
      { numRuns: 300 },
    );
  });

  test('an entry whose view was built already is written from it', () => {
    const entry = entryOf(
      {
        endpoint: 'GET /a',
        method: 'GET',
        status: 200,
        headers: 0,
        copy: false,
        body: 0,
        truncated: false,
        redactor: 0,
        key: 0,
        previousKey: undefined,
        sessionKey: undefined,
        verdict: undefined,
        step: 'response',
        response: 'response',
        postBody: undefined,
        bodyTruncated: false,
        requestHeaders: [],
        url: '/mock/a',
        stream: false,
        violations: false,
        note: undefined,
      },
      1,
    );
    const view = viewEntry(entry);
    view.notes.push('added after');
    expect(JSON.parse(entryText(entry)).notes).toEqual(['added after']);
  });
});
