// What request validation works out once per operation (the media type a Content-Type picks,
// how the body is read, its validator; each parameter's types and style) gives every request the
// verdict it would get worked out afresh: whatever the order of Content-Type values, beyond the
// number of values kept, and for a description that changed (a new operation, new plans).
import { beforeAll, describe, expect, test } from 'vitest';
import { join } from 'node:path';
import { ROOT } from '../helpers/cli.js';
import { indexOperations, loadDescription, type Description } from '../../src/description/description.js';
import type { RequestInput } from '../../src/validate/request.js';
import { loadAjv } from '../../src/validate/schemas.js';
import type { Violation } from '../../src/validate/violations.js';
import type { JsonObject } from '../../src/description/json-pointer.js';
import { checkOf } from '../helpers/operation-check.js';

const SPEC = join(ROOT, 'test', 'fixtures', 'validate', 'charges-3.0.yaml');

let description: Description;
beforeAll(async () => {
  await loadAjv();
  const read = await loadDescription(SPEC);
  if (!read.ok) throw new Error(read.message);
  description = read.description;
});

const post = (contentType: string | undefined, body: string): RequestInput => ({
  mockPath: '/v1/charges',
  url: '/mock/v1/charges',
  headers: contentType === undefined ? {} : { 'content-type': contentType },
  body: Buffer.from(body),
});

const REFUSED = (type: string): Violation => ({
  in: 'body',
  pointer: '',
  param: null,
  keyword: 'contentType',
  message: `the body's content type ${JSON.stringify(type)} is not one the operation accepts (application/json, application/x-www-form-urlencoded, multipart/form-data)`,
});
const ZERO: Violation = {
  in: 'body',
  pointer: '/amount',
  param: 'amount',
  keyword: 'exclusiveMinimum',
  message: 'body field amount must be > 0',
};

describe('the body plan of each Content-Type', () => {
  test('values in turn each get their own verdict, again and again', () => {
    const check = checkOf(description, 'POST /charges');
    const good = '{"amount":5,"currency":"usd"}';
    for (let pass = 0; pass < 2; pass++) {
      expect(check(post('application/json', good))).toEqual([]);
      expect(check(post('text/plain', good))).toEqual([REFUSED('text/plain')]);
      expect(check(post('application/json; charset=utf-8', '{"amount":0,"currency":"usd"}'))).toEqual([ZERO]);
      // A form body: strings coerced per the schema (a JSON body is not).
      expect(check(post('application/x-www-form-urlencoded', 'amount=0&currency=usd'))).toEqual([ZERO]);
      expect(check(post('application/json', '{"amount":"5","currency":"usd"}'))).toEqual([
        {
          in: 'body',
          pointer: '/amount',
          param: 'amount',
          keyword: 'type',
          message: 'body field amount must be integer',
        },
      ]);
      expect(check(post('multipart/form-data', 'x'))).toEqual([
        {
          in: 'body',
          pointer: '',
          param: null,
          keyword: 'parse',
          message: 'the multipart body cannot be read (no boundary)',
        },
      ]);
      expect(check(post(undefined, good))).toEqual([REFUSED('')]);
      expect(check(post('application/json', '{"amount":'))).toEqual([
        { in: 'body', pointer: '', param: null, keyword: 'parse', message: 'the body is not valid JSON' },
      ]);
    }
  });

  test("a violation handed out is the request's own: changing it changes no later verdict", () => {
    const check = checkOf(description, 'POST /charges');
    const first = check(post('text/csv', 'a,b'));
    (first[0] as { message: string }).message = 'changed';
    expect(check(post('text/csv', 'a,b'))).toEqual([REFUSED('text/csv')]);
  });

  test("a multipart body is read with its own request's boundary, whatever the boundary of the one before", () => {
    const check = checkOf(description, 'POST /charges');
    for (let i = 0; i < 40; i++) {
      const amount = i % 2 === 0 ? '0' : '5';
      const body = `--b${i}\r\nContent-Disposition: form-data; name="amount"\r\n\r\n${amount}\r\n--b${i}\r\nContent-Disposition: form-data; name="currency"\r\n\r\nusd\r\n--b${i}--\r\n`;
      expect(check(post(`multipart/form-data; boundary=b${i}`, body))).toEqual(i % 2 === 0 ? [ZERO] : []);
    }
  });

  test('more Content-Type values than are kept are still judged each time', () => {
    const check = checkOf(description, 'POST /charges');
    for (let i = 0; i < 100; i++) {
      expect(check(post(`text/x-${i}`, 'hi'))).toEqual([REFUSED(`text/x-${i}`)]);
      expect(check(post(`application/json; x=${i}`, '{"amount":0,"currency":"usd"}'))).toEqual([ZERO]);
      expect(check(post(`application/x-${'y'.repeat(i * 3)}`, 'hi'))).toEqual([
        REFUSED(`application/x-${'y'.repeat(i * 3)}`),
      ]);
    }
  });
});

const docWith = (amount: JsonObject): JsonObject => ({
  openapi: '3.0.3',
  info: { title: 't', version: '1' },
  paths: {
    '/a': {
      post: {
        parameters: [{ name: 'n', in: 'query', schema: { type: 'integer', maximum: 5 } }],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { type: 'object', properties: { amount } } } },
        },
        responses: { '200': { description: 'ok' } },
      },
    },
  },
});

test("a changed description gets new plans: the old one's checks are not reused", () => {
  const before = indexOperations(docWith({ type: 'integer' }), '3.0.3');
  const after = indexOperations(docWith({ type: 'string' }), '3.0.3');
  const input: RequestInput = {
    mockPath: '/a',
    url: '/mock/a?n=7',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"amount":1}'),
  };
  const n: Violation = {
    in: 'query',
    pointer: '/n',
    param: 'n',
    keyword: 'maximum',
    message: 'query parameter n must be <= 5',
  };
  expect(checkOf(before, 'POST /a')(input)).toEqual([n]);
  expect(checkOf(after, 'POST /a')(input)).toEqual([
    n,
    { in: 'body', pointer: '/amount', param: 'amount', keyword: 'type', message: 'body field amount must be string' },
  ]);
  expect(checkOf(before, 'POST /a')(input)).toEqual([n]);
});
