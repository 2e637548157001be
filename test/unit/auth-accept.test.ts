// `auth.accept` as a pure function: the default list decides exactly as the seed's checkAuth does
// (for any header values), each other place reads its key, list order is precedence; and the one
// redactor hides the places a list adds.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkAuth, createKeyMatcher, type AuthVerdict } from '../../src/pipeline/auth.js';
import { checkAccepted, DEFAULT_ACCEPT, type CredentialRequest } from '../../src/pipeline/auth-accept.js';
import type { AuthSource } from '../../src/config/types.js';
import { createRedactor } from '../../src/redact/redactor.js';

const KEY = 'mk_abc';
const matcher = createKeyMatcher(KEY);
const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

function request(headers: Record<string, string> = {}, url = '/x', repeatAuthorization = false): CredentialRequest {
  const rawHeaders = Object.entries(headers).flat();
  if (repeatAuthorization) rawHeaders.push('Authorization', 'Bearer other');
  return { headers, url, rawHeaders };
}

describe('the default list', () => {
  const value = fc.oneof(
    fc.constant(KEY),
    fc.constant(` ${KEY}\t`),
    fc.string({ maxLength: 40 }),
    fc.constantFrom(
      '',
      ' ',
      'mk_ab',
      `Bearer ${KEY}`,
      `bearer  ${KEY}`,
      `Basic ${b64(`${KEY}:pw`)}`,
      `Basic ${b64(KEY)}`,
      'Basic !!',
      `Token ${KEY}`,
      'Bearer',
    ),
  );
  it('decides as checkAuth for any X-API-Key and Authorization', () => {
    fc.assert(
      fc.property(
        fc.option(value, { nil: undefined }),
        fc.option(value, { nil: undefined }),
        fc.boolean(),
        (apiKey, authorization, repeated) => {
          const headers: Record<string, string> = {};
          if (apiKey !== undefined) headers['x-api-key'] = apiKey;
          if (authorization !== undefined) headers.authorization = authorization;
          const req = request(headers, '/x', repeated && authorization !== undefined);
          expect(checkAccepted(DEFAULT_ACCEPT, req, matcher)).toBe(checkAuth(headers, matcher, req.rawHeaders));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('each place', () => {
  const cases: Array<[string, AuthSource[], CredentialRequest, AuthVerdict]> = [
    ['query', [{ kind: 'query', name: 'api_key' }], request({}, `/x?a=1&api_key=${KEY}`), 'ok'],
    [
      'query, encoded',
      [{ kind: 'query', name: 'api_key' }],
      request({}, `/x?api_key=${encodeURIComponent(KEY)}`),
      'ok',
    ],
    ['query, wrong', [{ kind: 'query', name: 'api_key' }], request({}, '/x?api_key=nope'), 'invalid'],
    ['query, empty', [{ kind: 'query', name: 'api_key' }], request({}, '/x?api_key='), 'missing'],
    ['query, twice', [{ kind: 'query', name: 'api_key' }], request({}, `/x?api_key=${KEY}&api_key=${KEY}`), 'invalid'],
    ['header', [{ kind: 'header', name: 'X-Token' }], request({ 'x-token': KEY }), 'ok'],
    [
      'header, joined repeat',
      [{ kind: 'header', name: 'X-Token' }],
      request({ 'x-token': `${KEY}, ${KEY}` }),
      'invalid',
    ],
    // A name every object inherits is a header like any other: absent unless sent.
    ['header named like an inherited field, absent', [{ kind: 'header', name: 'constructor' }], request(), 'missing'],
    [
      'header named like an inherited field',
      [{ kind: 'header', name: 'constructor' }],
      request({ constructor: KEY }),
      'ok',
    ],
    ['scheme, any case', [{ kind: 'scheme', name: 'Token' }], request({ authorization: `TOKEN ${KEY}` }), 'ok'],
    [
      'scheme, other scheme skipped',
      [{ kind: 'scheme', name: 'Token' }],
      request({ authorization: `Bearer ${KEY}` }),
      'missing',
    ],
    [
      'scheme, repeated Authorization',
      [{ kind: 'scheme', name: 'Token' }],
      request({ authorization: `Token ${KEY}` }, '/x', true),
      'invalid',
    ],
    ['cookie', [{ kind: 'cookie', name: 'session' }], request({ cookie: `a=1; session=${KEY}` }), 'ok'],
    ['cookie, absent', [{ kind: 'cookie', name: 'session' }], request({ cookie: 'a=1' }), 'missing'],
    ['bearer only: X-API-Key not read', [{ kind: 'bearer' }], request({ 'x-api-key': KEY }), 'missing'],
    [
      'order: query before bearer',
      [{ kind: 'query', name: 'k' }, { kind: 'bearer' }],
      request({ authorization: `Bearer ${KEY}` }, '/x?k=wrong'),
      'invalid',
    ],
    [
      'order: bearer before query',
      [{ kind: 'bearer' }, { kind: 'query', name: 'k' }],
      request({ authorization: `Bearer ${KEY}` }, '/x?k=wrong'),
      'ok',
    ],
    [
      'basic before scheme',
      [{ kind: 'basic' }, { kind: 'scheme', name: 'token' }],
      request({ authorization: `Basic ${b64(`${KEY}:`)}` }),
      'ok',
    ],
    // Only a form present with a non-empty value decides: an empty one gives way to the next place.
    [
      'order: an empty query value gives way',
      [
        { kind: 'query', name: 'k' },
        { kind: 'header', name: 'X-Token' },
      ],
      request({ 'x-token': KEY }, '/x?k='),
      'ok',
    ],
    [
      'order: a blank header gives way',
      [
        { kind: 'header', name: 'X-Token' },
        { kind: 'cookie', name: 'session' },
      ],
      request({ 'x-token': ' \t', cookie: `session=${KEY}` }),
      'ok',
    ],
    [
      'order: an empty cookie gives way',
      [{ kind: 'cookie', name: 'session' }, { kind: 'bearer' }],
      request({ cookie: 'session=', authorization: `Bearer ${KEY}` }),
      'ok',
    ],
    [
      'order: a scheme without a token gives way',
      [
        { kind: 'scheme', name: 'Token' },
        { kind: 'query', name: 'k' },
      ],
      request({ authorization: 'Token' }, `/x?k=${KEY}`),
      'ok',
    ],
  ];
  it.each(cases)('%s', (_name, sources, req, expected) => {
    expect(checkAccepted(sources, req, matcher)).toBe(expected);
  });
});

describe('the redactor and the places auth.accept adds', () => {
  it('hides listed headers and query parameters, keeps them through a rotation, and is itself when nothing changes', () => {
    const plain = createRedactor([KEY]);
    expect(plain.withPlaces({ headers: [], query: [] })).toBe(plain);
    expect([
      plain.isSecretHeader('x-api-key'),
      plain.isSecretHeader('x-token'),
      plain.isSecretQuery('api_key'),
    ]).toEqual([true, false, false]);
    const placed = plain.withPlaces({ headers: ['X-Token'], query: ['api_key'] });
    expect([
      placed.isSecretHeader('x-token'),
      placed.isSecretHeader('authorization'),
      placed.isSecretQuery('api_key'),
      placed.isSecretQuery('page'),
    ]).toEqual([true, true, true, false]);
    const rotated = placed.rotated('mk_new_key');
    expect([rotated.isSecretHeader('x-token'), rotated.isSecretQuery('api_key')]).toEqual([true, true]);
    expect(rotated.scrub(`a ${KEY} b mk_new_key`)).toBe('a <redacted> b <redacted>');
  });
});
