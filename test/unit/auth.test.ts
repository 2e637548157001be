import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkAuth,
  createConnectionAuth,
  createKeyMatcher,
  type AuthHeaders,
  type AuthVerdict,
} from '../../src/pipeline/auth.js';

const KEY = 'mk_abc';
const matcher = createKeyMatcher(KEY);
const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

// 'bWtfYWJjOg==' is base64('mk_abc:').
const cases: Array<[name: string, headers: AuthHeaders, expected: AuthVerdict]> = [
  // no credential
  ['no headers', {}, 'missing'],
  ['empty X-API-Key', { 'x-api-key': '' }, 'missing'],
  ['blank X-API-Key', { 'x-api-key': '   ' }, 'missing'],
  ['empty Authorization', { authorization: '' }, 'missing'],
  ['blank Authorization', { authorization: ' \t ' }, 'missing'],
  ['Bearer without token', { authorization: 'Bearer' }, 'missing'],
  ['Bearer with only spaces', { authorization: 'Bearer   ' }, 'missing'],
  ['Basic without token', { authorization: 'Basic' }, 'missing'],
  ['Basic with only spaces', { authorization: 'Basic ' }, 'missing'],
  ['unknown scheme Token', { authorization: `Token ${KEY}` }, 'missing'],
  ['unknown scheme Digest', { authorization: 'Digest username="mk_abc"' }, 'missing'],
  ['bare key without scheme', { authorization: KEY }, 'missing'],
  ['scheme glued to key', { authorization: `Bearer${KEY}` }, 'missing'],
  ['empty X-API-Key array', { 'x-api-key': [] }, 'missing'],
  // X-API-Key
  ['X-API-Key right', { 'x-api-key': KEY }, 'ok'],
  ['X-API-Key with surrounding OWS', { 'x-api-key': ` \t${KEY} ` }, 'ok'],
  ['X-API-Key wrong', { 'x-api-key': 'mk_abd' }, 'invalid'],
  ['X-API-Key prefix of key', { 'x-api-key': 'mk_ab' }, 'invalid'],
  ['X-API-Key key plus suffix', { 'x-api-key': `${KEY}x` }, 'invalid'],
  ['X-API-Key different case', { 'x-api-key': KEY.toUpperCase() }, 'invalid'],
  ['X-API-Key as Bearer value', { 'x-api-key': `Bearer ${KEY}` }, 'invalid'],
  ['two X-API-Key joined by Node', { 'x-api-key': `${KEY}, ${KEY}` }, 'invalid'],
  ['two X-API-Key as array', { 'x-api-key': [KEY, KEY] }, 'invalid'],
  ['X-API-Key array of one', { 'x-api-key': [KEY] }, 'ok'],
  ['X-API-Key array of blanks', { 'x-api-key': ['', ' '] }, 'missing'],
  ['X-API-Key wins over a right Bearer', { 'x-api-key': 'nope', authorization: `Bearer ${KEY}` }, 'invalid'],
  ['right X-API-Key wins over wrong Bearer', { 'x-api-key': KEY, authorization: 'Bearer nope' }, 'ok'],
  ['empty X-API-Key falls back to Bearer', { 'x-api-key': '', authorization: `Bearer ${KEY}` }, 'ok'],
  ['blank X-API-Key falls back to Basic', { 'x-api-key': ' ', authorization: 'Basic bWtfYWJjOg==' }, 'ok'],
  ['X-API-Key with control char', { 'x-api-key': `${KEY}\u0000` }, 'invalid'],
  ['X-API-Key with newline', { 'x-api-key': `\n${KEY}` }, 'invalid'],
  ['X-API-Key non-ASCII', { 'x-api-key': 'mk_äbc' }, 'invalid'],
  ['X-API-Key 100 KB', { 'x-api-key': 'k'.repeat(100_000) }, 'invalid'],
  // Bearer
  ['Bearer right', { authorization: `Bearer ${KEY}` }, 'ok'],
  ['bearer lower case', { authorization: `bearer ${KEY}` }, 'ok'],
  ['BEARER upper case', { authorization: `BEARER ${KEY}` }, 'ok'],
  ['bEaReR mixed case', { authorization: `bEaReR ${KEY}` }, 'ok'],
  ['Bearer with two spaces', { authorization: `Bearer  ${KEY}` }, 'ok'],
  ['Bearer with tab', { authorization: `Bearer\t${KEY}` }, 'ok'],
  ['Bearer with surrounding OWS', { authorization: `  Bearer ${KEY}  ` }, 'ok'],
  ['Bearer wrong', { authorization: 'Bearer mk_xyz' }, 'invalid'],
  ['Bearer key in wrong case', { authorization: `Bearer ${KEY.toUpperCase()}` }, 'invalid'],
  ['Bearer with two tokens', { authorization: `Bearer ${KEY} ${KEY}` }, 'invalid'],
  ['Bearer with base64 of key', { authorization: 'Bearer bWtfYWJjOg==' }, 'invalid'],
  ['Bearer 100 KB', { authorization: `Bearer ${'a'.repeat(100_000)}` }, 'invalid'],
  ['Bearer non-ASCII', { authorization: 'Bearer mk_abc\u00e9' }, 'invalid'],
  ['Bearer control chars', { authorization: `Bearer ${KEY}\u0001\u007f` }, 'invalid'],
  ['Bearer lone surrogate', { authorization: 'Bearer \ud800' }, 'invalid'],
  ['look-alike Cyrillic scheme is unknown', { authorization: `\u0412\u0435arer ${KEY}` }, 'missing'],
  // Basic
  ['Basic right (key + colon)', { authorization: 'Basic bWtfYWJjOg==' }, 'ok'],
  ['basic lower case', { authorization: 'basic bWtfYWJjOg==' }, 'ok'],
  ['BASIC upper case', { authorization: 'BASIC bWtfYWJjOg==' }, 'ok'],
  ['Basic with two spaces', { authorization: 'Basic  bWtfYWJjOg==' }, 'ok'],
  ['Basic with password', { authorization: `Basic ${b64(`${KEY}:secret`)}` }, 'ok'],
  ['Basic password containing colons', { authorization: `Basic ${b64(`${KEY}:a:b:c`)}` }, 'ok'],
  ['Basic without colon: whole is the username', { authorization: `Basic ${b64(KEY)}` }, 'ok'],
  ['Basic wrong username', { authorization: `Basic ${b64('mk_xyz:')}` }, 'invalid'],
  ['Basic key as password', { authorization: `Basic ${b64(`user:${KEY}`)}` }, 'invalid'],
  ['Basic empty username', { authorization: `Basic ${b64(':')}` }, 'invalid'],
  ['Basic junk characters', { authorization: 'Basic bWtfYWJj!!' }, 'invalid'],
  ['Basic junk inside', { authorization: 'Basic bWtf*YWJjOg==' }, 'invalid'],
  ['Basic missing padding', { authorization: 'Basic bWtfYWJjOg' }, 'invalid'],
  ['Basic short padding', { authorization: 'Basic bWtfYWJjOg=' }, 'invalid'],
  ['Basic extra padding', { authorization: 'Basic bWtfYWJjOg===' }, 'invalid'],
  ['Basic padding in the middle', { authorization: 'Basic bWtf=YWJjOg==' }, 'invalid'],
  ['Basic non-zero pad bits', { authorization: 'Basic bWtfYWJjOh==' }, 'invalid'],
  ['Basic standard alphabet with + and /', { authorization: 'Basic bWtfYWJjOj8/' }, 'ok'], // mk_abc:??
  ['Basic base64url alphabet', { authorization: 'Basic bWtfYWJjOj8_' }, 'invalid'],
  ['Basic junk of the right length', { authorization: 'Basic bWtfYWJjOg!=' }, 'invalid'],
  ['Basic token with inner space', { authorization: 'Basic bWtf YWJjOg==' }, 'invalid'],
  [
    'Basic of invalid UTF-8',
    { authorization: `Basic ${Buffer.from([0xff, 0xfe, 0x3a]).toString('base64')}` },
    'invalid',
  ],
  ['Basic of a UTF-8 key', { authorization: `Basic ${b64('mk_äbc:')}` }, 'invalid'],
  ['Basic 100 KB', { authorization: `Basic ${'QUFB'.repeat(25_000)}` }, 'invalid'],
  ['Basic with newline in token', { authorization: 'Basic bWtfYWJjOg==\n' }, 'invalid'],
];

describe('checkAuth', () => {
  it.each(cases)('%s', (_name, headers, expected) => {
    expect(checkAuth(headers, matcher)).toBe(expected);
  });

  it('has at least 30 table rows', () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
  });

  it('accepts a non-ASCII key in every form', () => {
    const key = 'clé_🔑';
    const m = createKeyMatcher(key);
    expect(checkAuth({ 'x-api-key': key }, m)).toBe('ok');
    expect(checkAuth({ authorization: `Bearer ${key}` }, m)).toBe('ok');
    expect(checkAuth({ authorization: `Basic ${b64(`${key}:`)}` }, m)).toBe('ok');
  });

  it('rejects the old key once a matcher for a new key is built', () => {
    const next = createKeyMatcher('mk_new');
    expect(checkAuth({ 'x-api-key': KEY }, next)).toBe('invalid');
    expect(checkAuth({ 'x-api-key': 'mk_new' }, next)).toBe('ok');
  });

  it('keeps only a 32-byte digest, never the key', () => {
    expect(matcher.digest).toHaveLength(32);
    expect(JSON.stringify(matcher)).not.toContain(KEY);
  });
});

// Keys as the config allows them: non-empty, no whitespace (any Unicode).
const keyArb = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 64 })
  .filter((key) => !/\s/u.test(key) && !key.includes(':') && key.length > 0); // (a key has no `:`: Basic auth ends the username there)
const headerArb = fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 300 }));

describe('checkAuth properties', () => {
  it('never throws on arbitrary header values', () => {
    fc.assert(
      fc.property(
        fc.option(fc.oneof(headerArb, fc.array(headerArb, { maxLength: 3 })), { nil: undefined }),
        fc.option(
          fc.oneof(
            headerArb,
            headerArb.map((t) => `Basic ${t}`),
            headerArb.map((t) => `Bearer ${t}`),
          ),
          { nil: undefined },
        ),
        (apiKey, authorization) => {
          const headers: AuthHeaders = {};
          if (apiKey !== undefined) headers['x-api-key'] = apiKey;
          if (authorization !== undefined) headers.authorization = authorization;
          expect(['ok', 'missing', 'invalid']).toContain(checkAuth(headers, matcher));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('authenticates a valid key in all three forms, with any scheme case', () => {
    fc.assert(
      fc.property(keyArb, fc.boolean(), fc.string({ maxLength: 20 }), (key, upper, password) => {
        const m = createKeyMatcher(key);
        const bearer = upper ? 'BEARER' : 'bearer';
        const basic = upper ? 'BASIC' : 'basic';
        expect(checkAuth({ 'x-api-key': key }, m)).toBe('ok');
        expect(checkAuth({ authorization: `${bearer} ${key}` }, m)).toBe('ok');
        expect(checkAuth({ authorization: `${basic} ${b64(`${key}:${password}`)}` }, m)).toBe('ok');
      }),
    );
  });

  it('never authenticates a different key', () => {
    fc.assert(
      fc.property(keyArb, keyArb, (key, other) => {
        fc.pre(key !== other && !key.includes(':') && !other.includes(':'));
        const m = createKeyMatcher(key);
        expect(checkAuth({ 'x-api-key': other }, m)).toBe('invalid');
        expect(checkAuth({ authorization: `Bearer ${other}` }, m)).toBe('invalid');
        expect(checkAuth({ authorization: `Basic ${b64(`${other}:`)}` }, m)).toBe('invalid');
      }),
    );
  });
});

describe('several Authorization headers (rawHeaders)', () => {
  const key = createKeyMatcher('mk_rawHeadersKey');
  it.each([
    ['one, right', ['Authorization', 'Bearer mk_rawHeadersKey'], 'ok'],
    ['right then wrong', ['Authorization', 'Bearer mk_rawHeadersKey', 'authorization', 'Bearer nope'], 'invalid'],
    [
      'right twice',
      ['Authorization', 'Bearer mk_rawHeadersKey', 'AUTHORIZATION', 'Bearer mk_rawHeadersKey'],
      'invalid',
    ],
    [
      'X-API-Key wins over two Authorization',
      ['X-API-Key', 'mk_rawHeadersKey', 'Authorization', 'a', 'Authorization', 'b'],
      'ok',
    ],
  ] as const)('%s → %s', (_name, raw, verdict) => {
    const headers: Record<string, string> = {};
    for (let i = 0; i < raw.length; i += 2) headers[raw[i]!.toLowerCase()] ??= raw[i + 1]!;
    expect(checkAuth(headers, key, raw)).toBe(verdict);
  });
});

/** rawHeaders as Node gives them for `headers` (a repeated Authorization given as an array here). */
function rawOf(headers: Record<string, string | string[] | undefined>): string[] {
  return Object.entries(headers).flatMap(([name, value]) =>
    value === undefined ? [] : (Array.isArray(value) ? value : [value]).flatMap((v) => [name, v]),
  );
}

describe('createConnectionAuth (a memory per connection)', () => {
  const other = createKeyMatcher('mk_other');

  it('gives checkAuth verdicts for any sequence of requests on a few connections, keys rotating', () => {
    const value = fc.constantFrom(
      KEY,
      ` ${KEY}`,
      'mk_abd',
      'mk_other',
      '',
      '  ',
      `Bearer ${KEY}`,
      'Bearer mk_other',
      `Basic ${b64(`${KEY}:`)}`,
    );
    const request = fc.record({
      connection: fc.nat(2),
      rotated: fc.boolean(),
      apiKey: fc.option(fc.oneof(value, fc.array(value, { minLength: 2, maxLength: 2 })), { nil: undefined }),
      authorization: fc.option(fc.oneof(value, fc.array(value, { minLength: 2, maxLength: 2 })), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(request, { maxLength: 30 }), (requests) => {
        const auth = createConnectionAuth();
        const connections = [{}, {}, {}];
        for (const r of requests) {
          const key = r.rotated ? other : matcher;
          const raw = rawOf({ 'x-api-key': r.apiKey, authorization: r.authorization });
          // as Node builds `headers`: a repeated X-API-Key joined, only the first Authorization kept
          const headers: AuthHeaders = {
            'x-api-key': Array.isArray(r.apiKey) ? r.apiKey.join(', ') : r.apiKey,
            authorization: Array.isArray(r.authorization) ? r.authorization[0] : r.authorization,
          };
          expect(auth(headers, key, raw, connections[r.connection] as object)).toBe(checkAuth(headers, key, raw));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('does not reuse a verdict after a second Authorization header arrives on the same connection', () => {
    const auth = createConnectionAuth();
    const connection = {};
    const bearer = `Bearer ${KEY}`;
    expect(auth({ authorization: bearer }, matcher, ['authorization', bearer], connection)).toBe('ok');
    expect(
      auth({ authorization: bearer }, matcher, ['authorization', bearer, 'authorization', 'Bearer x'], connection),
    ).toBe('invalid');
    expect(auth({ authorization: bearer }, matcher, ['authorization', bearer], connection)).toBe('ok');
  });
});
