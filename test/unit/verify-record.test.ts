// The verify examples a recording writes (src/record/verify-example.ts): one per answer told apart,
// redacted, and what a later recording keeps of the user's.
import { describe, expect, it } from 'vitest';
import type { RecordedExchange } from '../../src/record/exchange.js';
import { createScrubber } from '../../src/record/scrub.js';
import { mergeRecordedVerify, recordedVerify } from '../../src/record/verify-example.js';

const exchange = (
  query: Record<string, string>,
  status = 200,
  headers: Record<string, string> = {},
  body?: string,
): RecordedExchange => ({
  seq: 0,
  method: 'GET',
  path: '/users/42',
  query,
  requestHeaders: headers,
  ...(body === undefined ? {} : { requestBody: Buffer.from(body) }),
  status,
  responseHeaders: [],
  responseBody: Buffer.alloc(0),
});
const scrub = () => createScrubber(['mk_theMockKey000000000000000000001'], undefined);

describe('recordedVerify', () => {
  it('one answer: the first request, its parameters, query and captured headers, and its status', () => {
    const samples = [
      {
        ex: exchange({ expand: 'owner' }, 200, {
          accept: 'application/json',
          authorization: 'Bearer x',
          'x-trace': 't',
        }),
        params: { id: '42' },
      },
    ];
    expect(recordedVerify(samples, undefined, ['accept', 'authorization'], scrub())).toEqual({
      request: { params: { id: '42' }, query: { expand: 'owner' }, headers: { accept: 'application/json' } },
      expect: 200,
    });
  });

  it('answers told apart by a when: one example per value, in the order seen', () => {
    const samples = [
      { ex: exchange({ tier: 'gold' }), params: { id: '42' } },
      { ex: exchange({ tier: 'free' }, 402), params: { id: '42' } },
      { ex: exchange({ tier: 'gold' }), params: { id: '42' } },
    ];
    expect(recordedVerify(samples, 'query.tier', [], scrub())).toEqual([
      { request: { params: { id: '42' }, query: { tier: 'gold' } }, expect: 200 },
      { request: { params: { id: '42' }, query: { tier: 'free' } }, expect: 402 },
    ]);
    expect(recordedVerify(samples, 'sequence', [], scrub())).toEqual({
      request: { params: { id: '42' }, query: { tier: 'gold' } },
      expect: 200,
    });
  });

  it('redacted: secret-named query fields left out, secret shapes and the mock key replaced, JSON bodies scrubbed', () => {
    const samples = [
      {
        ex: exchange({ api_key: 'abc', q: 'mk_theMockKey000000000000000000001' }, 200, {}, '{"password":"p","n":1}'),
        params: {},
      },
    ];
    expect(recordedVerify(samples, undefined, [], scrub())).toEqual({
      request: { query: { q: '<redacted>' }, body: { password: '<redacted>', n: 1 } },
      expect: 200,
    });
  });
});

describe('mergeRecordedVerify', () => {
  const fresh = { request: { params: { id: '7' } }, expect: 200 };
  it.each([
    ['no old example', undefined, fresh],
    ['verify: false stays', false, false],
    [
      'the name and ignore stay',
      { name: 'me', request: { params: { id: '1' } }, expect: 404, ignore: ['created'] },
      { ...fresh, name: 'me', ignore: ['created'] },
    ],
  ])('%s', (_name, old, merged) => {
    expect(mergeRecordedVerify(old, fresh)).toEqual(merged);
  });
  it('lists keep what the user added, example by example', () => {
    expect(mergeRecordedVerify([{ ignore: ['a'] }, { name: 'b' }], [fresh, fresh])).toEqual([
      { ...fresh, ignore: ['a'] },
      { ...fresh, name: 'b' },
    ]);
  });
});
