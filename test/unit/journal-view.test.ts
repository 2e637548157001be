// A journal entry's view (control/journal-entry.ts) builds its header, query and answer-header
// objects field by field, without Maps: the same objects, in the same order, as the Maps and
// Object.fromEntries it replaced (kept here as the reference), whatever names a client sends —
// `__proto__`, `constructor`, digits, repeats in any case. And a credential's key is named from the
// auth step's verdict exactly as from hashing it again.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { viewEntry, type RawEntry } from '../../src/control/journal-entry.js';
import { createKeyMatcher, type AuthVerdict, type KeyMatcher } from '../../src/pipeline/auth.js';
import { createRedactor, REDACTED, type Redactor } from '../../src/redact/redactor.js';

const KEY = 'mk_journalView00000000000000000001';
const OTHER = 'mk_journalView00000000000000000002';
const NAMES = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '0',
  '42',
  'x-api-key',
  'X-Api-Key',
  'authorization',
  'Accept',
  'accept',
  'x-trace',
  `x-${KEY}`,
];
const VALUES = ['', 'a', 'b, c', KEY, `Bearer ${KEY}`, `Bearer ${OTHER}`, 'text/html', '%41'];

function entry(parts: Partial<RawEntry> & { key?: KeyMatcher; redactor?: Redactor }): RawEntry {
  return {
    id: 7,
    time: Date.parse('2026-06-01T00:00:00Z'),
    method: 'GET',
    url: '/mock/users/1',
    rawHeaders: [],
    body: undefined,
    bodyTruncated: false,
    endpoint: 'GET /users/:id',
    response: null,
    status: 200,
    ms: 1.234,
    step: 'response',
    violations: undefined,
    note: undefined,
    key: createKeyMatcher(KEY),
    previousKey: undefined,
    sessionKey: undefined,
    keyVerdict: undefined,
    answerHeaders: [],
    answerBody: undefined,
    answerBodyTruncated: false,
    redactor: createRedactor([KEY]),
    view: undefined,
    ...parts,
  };
}

/** The request headers as the view showed them before: a Map, then Object.fromEntries. */
function referenceHeaders(rawHeaders: readonly string[], redactor: Redactor): Record<string, string> {
  const { scrub, isSecretHeader } = redactor;
  const headers = new Map<string, string>();
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const sentName = rawHeaders[i]!.toLowerCase();
    const name = isSecretHeader(sentName) ? sentName : scrub(rawHeaders[i]!).toLowerCase();
    const secret = isSecretHeader(name);
    const shown = secret ? REDACTED : scrub(rawHeaders[i + 1]!);
    const before = headers.get(name);
    headers.set(name, before === undefined || secret ? shown : `${before}, ${shown}`);
  }
  return Object.fromEntries(headers);
}

function referenceQuery(search: string, redactor: Redactor): Record<string, string | string[]> {
  const decode = (text: string) => {
    try {
      return decodeURIComponent(text.replace(/\+/g, ' '));
    } catch {
      return text;
    }
  };
  const query = new Map<string, string | string[]>();
  for (const part of search.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = redactor.scrub(decode(eq === -1 ? part : part.slice(0, eq)));
    const value = redactor.isSecretQuery(name) ? REDACTED : redactor.scrub(eq === -1 ? '' : decode(part.slice(eq + 1)));
    const before = query.get(name);
    query.set(name, before === undefined ? value : Array.isArray(before) ? [...before, value] : [before, value]);
  }
  return Object.fromEntries(query);
}

function referenceAnswerHeaders(headers: readonly string[], redactor: Redactor): Record<string, string> {
  const named = new Map<string, string>();
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const name = headers[i]!.toLowerCase();
    const value = redactor.scrub(headers[i + 1]!);
    const before = named.get(name);
    named.set(name, before === undefined ? value : `${before}, ${value}`);
  }
  return Object.fromEntries(named);
}

/** The same fields, in the same order, with the same values (JSON says both), and plain objects. */
function same(actual: object, expected: object): void {
  expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
  expect(Object.getPrototypeOf(actual)).toBe(Object.prototype);
  expect(Object.keys(actual)).toEqual(Object.keys(expected));
}

const pairs = fc.array(fc.tuple(fc.constantFrom(...NAMES), fc.constantFrom(...VALUES)), { maxLength: 8 });
const queryPart = fc.tuple(fc.constantFrom(...NAMES, 'api_key', 'q'), fc.constantFrom(...VALUES, 'x+y', '%zz'));

describe('a journal entry view, field by field', () => {
  test('request headers, query and answer headers are the objects the Maps made, for any names', () => {
    const places = createRedactor([KEY], { headers: ['x-trace'], query: ['api_key'] });
    fc.assert(
      fc.property(
        pairs,
        fc.array(queryPart, { maxLength: 6 }),
        pairs,
        fc.boolean(),
        (sent, query, answer, secretPlaces) => {
          const redactor = secretPlaces ? places : createRedactor([KEY]);
          const search = query.map(([n, v]) => `${encodeURIComponent(n)}=${v}`).join('&');
          const view = viewEntry(
            entry({
              rawHeaders: sent.flat(),
              url: search === '' ? '/mock/users/1' : `/mock/users/1?${search}`,
              answerHeaders: answer.flat(),
              redactor,
            }),
          );
          same(view.headers, referenceHeaders(sent.flat(), redactor));
          same(view.query, search === '' ? {} : referenceQuery(search, redactor));
          same(view.responseHeaders, referenceAnswerHeaders(answer.flat(), redactor));
          // A `__proto__` name is a field, never the object's prototype.
          for (const object of [view.headers, view.query, view.responseHeaders])
            expect(Object.getPrototypeOf(object)).toBe(Object.prototype);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('the fields keep their order, the answer and a stream after the request', () => {
    const view = viewEntry(
      entry({
        rawHeaders: ['Host', 'localhost', 'X-API-Key', KEY],
        answerHeaders: ['Content-Type', 'application/json'],
        answerBody: '{"id":1}',
        violations: [{ pointer: '/name', param: 'name', keyword: 'type', message: `bad ${KEY}` }] as never,
        stream: { events: 2, sent: 2, ended: 'complete', firstByteMs: 1.006, ms: 2.499 } as never,
      }),
    );
    // The request's fields, violations, the answer's, then the stream: as JSON writes them.
    const order =
      'id time method path query headers body bodyTruncated endpoint response status ms step credential notes ' +
      'violations responseHeaders responseBody responseBodyTruncated stream';
    expect(Object.keys(view)).toEqual(order.split(' '));
    expect(view.headers).toEqual({ host: 'localhost', 'x-api-key': REDACTED });
    expect(view.violations?.[0]?.message).toBe(`bad ${REDACTED}`);
    expect(view.stream).toEqual({ events: 2, sent: 2, ended: 'complete', firstByteMs: 1.01, ms: 2.5 });
  });
});

describe('the credential under auth.accept', () => {
  test('a header place with a name objects inherit (`constructor`) reads what the client sent there', () => {
    const key = createKeyMatcher(KEY, undefined, [{ kind: 'header', name: 'constructor' }]);
    const view = viewEntry(entry({ rawHeaders: ['Constructor', KEY], key, redactor: createRedactor([KEY]) }));
    expect(view.credential).toEqual({ via: 'header', name: 'constructor', key: 'current' });
  });
});

describe("the credential, from the auth step's verdict", () => {
  const keys = [{ name: 'ci', key: OTHER }];
  const named = createKeyMatcher(KEY, keys);
  const cases: { headers: string[]; key: KeyMatcher; verdict: AuthVerdict }[] = [
    { headers: ['X-API-Key', KEY], key: createKeyMatcher(KEY), verdict: 'ok' },
    { headers: ['Authorization', `Bearer ${KEY}`], key: named, verdict: 'ok' },
    {
      headers: ['Authorization', `Basic ${Buffer.from(`${OTHER}:`).toString('base64')}`],
      key: named,
      verdict: named.named!.values().next().value!,
    },
  ];
  test.each(cases)(
    '$headers.0 with verdict $verdict: the same as hashing the credential again',
    ({ headers, key, verdict }) => {
      const redactor = createRedactor([KEY, OTHER]);
      const hashed = viewEntry(entry({ rawHeaders: headers, key, redactor })).credential;
      const told = viewEntry(entry({ rawHeaders: headers, key, redactor, keyVerdict: verdict })).credential;
      expect(told).toEqual(hashed);
      expect(told.key).toBe('current');
    },
  );
});
