// Request validation of what parameters and numbers say: OpenAPI's int32 and int64 formats on
// parameters, bodies and answers; parameters described by `content`; matrix and label path
// parameters; integers and numbers written as decimal text only.
import { beforeAll, describe, expect, test } from 'vitest';
import { indexOperations, type Description } from '../../src/description/description.js';
import type { RequestInput } from '../../src/validate/request.js';
import { loadAjv, schemaSet } from '../../src/validate/schemas.js';
import type { Violation } from '../../src/validate/violations.js';
import type { JsonObject } from '../../src/description/json-pointer.js';
import { checkOf, getRequest } from '../helpers/operation-check.js';

beforeAll(async () => {
  await loadAjv();
});

function description(paths: Record<string, unknown>, version = '3.0.3'): Description {
  return indexOperations({ openapi: version, info: { title: 't', version: '1' }, paths } as JsonObject, version);
}

const get = getRequest;
const postJson = (path: string, body: string): RequestInput => ({
  mockPath: path,
  url: path,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from(body),
});
const brief = (violations: Violation[]): string[][] => violations.map((v) => [v.in, v.pointer, v.keyword]);

describe('int32 and int64', () => {
  const ok = { '200': { description: 'ok' } };
  const desc = description({
    '/items/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', format: 'int32' } }],
      get: { responses: ok },
    },
    '/big': {
      get: {
        parameters: [{ name: 'big', in: 'query', schema: { type: 'integer', format: 'int64' } }],
        responses: ok,
      },
    },
    '/e': {
      post: {
        requestBody: {
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: { i32: { type: 'integer', format: 'int32' }, i64: { type: 'integer', format: 'int64' } },
              },
            },
          },
        },
        responses: {
          '201': {
            description: 'ok',
            content: {
              'application/json': {
                schema: { type: 'object', properties: { n: { type: 'integer', format: 'int32' } } },
              },
            },
          },
        },
      },
    },
  });

  test.each([
    ['/items/2147483647', []],
    ['/items/-2147483648', []],
    ['/items/3000000000', [['path', '/id', 'format']]],
    ['/items/-2147483649', [['path', '/id', 'format']]],
    ['/items/abc', [['path', '/id', 'type']]],
  ])('path %s', (url, expected) => {
    expect(brief(checkOf(desc, 'GET /items/{id}')(get(url)))).toEqual(expected);
  });

  test.each([
    ['/big?big=9223372036854774784', []],
    ['/big?big=-9223372036854775808', []],
    ['/big?big=9223372036854775807', []], // the largest int64 (read as 2^63: a number cannot tell them apart)
    ['/big?big=10000000000000000000', [['query', '/big', 'format']]],
    ['/big?big=-9223372036854777856', [['query', '/big', 'format']]],
    ['/big?big=x', [['query', '/big', 'type']]],
  ])('query %s', (url, expected) => {
    expect(brief(checkOf(desc, 'GET /big')(get(url)))).toEqual(expected);
  });

  test.each([
    ['{"i32":2147483647,"i64":9223372036854774784}', []],
    ['{"i32":2147483648}', [['body', '/i32', 'format']]],
    ['{"i64":9223372036854775807}', []],
    ['{"i64":10000000000000000000}', [['body', '/i64', 'format']]],
    ['{"i32":"5"}', [['body', '/i32', 'type']]],
  ])('body %s', (body, expected) => {
    expect(brief(checkOf(desc, 'POST /e')(postJson('/e', body)))).toEqual(expected);
  });

  test('an answer is checked against an int32 response schema', () => {
    const check = schemaSet(desc).compileResponseAt('/paths/~1e/post/responses/201/content/application~1json/schema');
    expect(check({ n: 5 })).toBe(true);
    expect(check({ n: 99999999999 })).toBe(false);
    expect(check.errors?.map((e) => e.keyword)).toEqual(['format']);
  });
});

describe('a parameter described by content', () => {
  const object = { type: 'object', required: ['a'], properties: { a: { type: 'integer' } } };
  const desc = description({
    '/a': {
      get: {
        parameters: [
          { name: 'ct', in: 'query', content: { 'application/json': { schema: object } } },
          { name: 'X-Filter', in: 'header', content: { 'application/vnd.x+json': { schema: object } } },
          { name: 'word', in: 'query', content: { 'text/plain': { schema: { type: 'string', maxLength: 3 } } } },
          { name: 'need', in: 'query', required: true, content: { 'application/json': { schema: object } } },
        ],
        responses: { '200': { description: 'ok' } },
      },
    },
  });
  const check = checkOf(desc, 'GET /a');
  const need = `need=${encodeURIComponent('{"a":1}')}`;

  test('its value is read as its media type says and checked against that schema', () => {
    expect(check(get(`/a?${need}&ct=${encodeURIComponent('{"a":5}')}&word=abc`))).toEqual([]);
    expect(check(get(`/a?${need}&ct=${encodeURIComponent('{"a":"x"}')}`))).toEqual([
      {
        in: 'query',
        pointer: '/ct/a',
        param: 'ct[a]',
        keyword: 'type',
        message: 'query parameter ct[a] must be integer',
      },
    ]);
    // JSON says what a value is: "5" is a string, not the integer 5.
    expect(brief(check(get(`/a?${need}&ct=${encodeURIComponent('{"a":"5"}')}`)))).toEqual([['query', '/ct/a', 'type']]);
    expect(brief(check(get(`/a?${need}&ct=${encodeURIComponent('{}')}`)))).toEqual([['query', '/ct/a', 'required']]);
    expect(brief(check(get(`/a?${need}&word=abcd`)))).toEqual([['query', '/word', 'maxLength']]);
  });

  test('JSON that does not parse is a violation naming the parameter; a required one must be there', () => {
    expect(check(get(`/a?${need}&ct=notjson`))).toEqual([
      { in: 'query', pointer: '/ct', param: 'ct', keyword: 'parse', message: 'query parameter ct is not valid JSON' },
    ]);
    expect(brief(check(get('/a')))).toEqual([['query', '/need', 'required']]);
    expect(brief(check({ ...get(`/a?${need}`), headers: { 'x-filter': '{"a":true}' } }))).toEqual([
      ['header', '/x-filter/a', 'type'],
    ]);
    expect(brief(check({ ...get(`/a?${need}`), headers: { 'x-filter': '{' } }))).toEqual([
      ['header', '/x-filter', 'parse'],
    ]);
  });
});

describe('matrix and label path parameters', () => {
  const ok = { '200': { description: 'ok' } };
  const path = (name: string, style: string, schema: unknown, explode?: boolean) => ({
    get: {
      parameters: [{ name, in: 'path', required: true, style, schema, ...(explode === undefined ? {} : { explode }) }],
      responses: ok,
    },
  });
  const ints = { type: 'array', items: { type: 'integer' } };
  const rgb = {
    type: 'object',
    properties: { R: { type: 'integer' }, G: { type: 'integer' } },
    additionalProperties: false,
  };
  const desc = description({
    '/d/{x}': path('x', 'matrix', { type: 'integer' }),
    '/ma/{x}': path('x', 'matrix', ints),
    '/me/{x}': path('x', 'matrix', ints, true),
    '/mo/{x}': path('x', 'matrix', rgb),
    '/moe/{x}': path('x', 'matrix', rgb, true),
    '/l/{x}': path('x', 'label', { type: 'integer' }),
    '/la/{x}': path('x', 'label', ints),
    '/le/{x}': path('x', 'label', ints, true),
    '/lo/{x}': path('x', 'label', rgb),
    '/loe/{x}': path('x', 'label', rgb, true),
  });
  const check = (url: string): string[][] => {
    const template = `/${url.split('/')[1]}/{x}`;
    return brief(checkOf(desc, `GET ${template}`)(get(url)));
  };

  test.each([
    '/d/;x=5',
    '/ma/;x=1,2',
    '/ma/;x',
    '/me/;x=1;x=2',
    '/mo/;x=R,100,G,200',
    '/moe/;R=100;G=200',
    '/l/.5',
    '/la/.1.2',
    '/la/.1,2',
    '/le/.1.2',
    '/lo/.R.100.G.200',
    '/loe/.R=100.G=200',
  ])('%s is read as its style writes it', (url) => {
    expect(check(url)).toEqual([]);
  });

  test.each([
    ['/d/;x=a', [['path', '/x', 'type']]],
    ['/ma/;x=1,b', [['path', '/x/1', 'type']]],
    ['/me/;x=1;x=b', [['path', '/x/1', 'type']]],
    ['/mo/;x=R,red', [['path', '/x/R', 'type']]],
    ['/moe/;R=1;B=2', [['path', '/x/B', 'additionalProperties']]],
    ['/l/.a', [['path', '/x', 'type']]],
    ['/la/.1.b', [['path', '/x/1', 'type']]],
    ['/loe/.R=r', [['path', '/x/R', 'type']]],
  ])('%s breaks the schema', (url, expected) => {
    expect(check(url)).toEqual(expected);
  });

  test('a value without its style’s start is one style violation', () => {
    expect(checkOf(desc, 'GET /d/{x}')(get('/d/5'))).toEqual([
      {
        in: 'path',
        pointer: '/x',
        param: 'x',
        keyword: 'style',
        message: 'path parameter x must be written ;x=… (style matrix)',
      },
    ]);
    expect(check('/d/;y=5')).toEqual([['path', '/x', 'style']]);
    expect(check('/me/;x=1;y=2')).toEqual([['path', '/x', 'style']]);
    expect(check('/l/5')).toEqual([['path', '/x', 'style']]);
  });
});

describe('integers and numbers in parameters are decimal text', () => {
  const desc = description({
    '/q/{id}': {
      get: {
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'integer' } },
          { name: 'limit', in: 'query', schema: { type: 'integer', nullable: true } },
          { name: 'price', in: 'query', schema: { type: 'number' } },
          { name: 'ids', in: 'query', explode: false, schema: { type: 'array', items: { type: 'integer' } } },
          { name: 'X-List', in: 'header', schema: { type: 'array', items: { type: 'integer' } } },
          { name: 'X-N', in: 'header', schema: { type: 'integer' } },
          { name: 'either', in: 'query', schema: { oneOf: [{ type: 'integer' }, { type: 'string' }] } },
        ],
        responses: { '200': { description: 'ok' } },
      },
    },
  });
  const check = (url: string, headers: Record<string, string> = {}): string[][] =>
    brief(checkOf(desc, 'GET /q/{id}')({ ...get(url), headers }));

  test.each([
    '/q/5?limit=-12&price=1.5&ids=1,2',
    '/q/007?price=-3&limit=',
    '/q/5?price=1e2&price=2.5E-3',
    '/q/5?either=0x10',
  ])('%s is valid', (url) => {
    expect(check(url)).toEqual([]);
  });

  test('headers read 1, 2 as a list of integers', () => {
    expect(check('/q/5', { 'x-list': '1, 2', 'x-n': '3' })).toEqual([]);
    expect(check('/q/5', { 'x-list': '1, 0x2', 'x-n': '+3' })).toEqual([
      ['header', '/x-list/1', 'type'],
      ['header', '/x-n', 'type'],
    ]);
  });

  test.each([
    ['/q/5?limit=0x10', [['query', '/limit', 'type']]],
    ['/q/5?limit=1e2', [['query', '/limit', 'type']]],
    ['/q/5?limit=%205', [['query', '/limit', 'type']]],
    ['/q/5?limit=1.0', [['query', '/limit', 'type']]],
    ['/q/5?limit=Infinity', [['query', '/limit', 'type']]],
    ['/q/5?price=.5', [['query', '/price', 'type']]],
    ['/q/5?price=0b11', [['query', '/price', 'type']]],
    ['/q/5?ids=1,0x2', [['query', '/ids/1', 'type']]],
    ['/q/0x5', [['path', '/id', 'type']]],
    ['/q/%2B5', [['path', '/id', 'type']]],
  ])('%s is refused', (url, expected) => {
    expect(check(url)).toEqual(expected);
  });
});

describe('integers and numbers in form fields and deepObject members are decimal text too', () => {
  const desc = description({
    '/orders': {
      get: {
        parameters: [
          {
            name: 'filter',
            in: 'query',
            style: 'deepObject',
            schema: { type: 'object', properties: { min: { type: 'integer' }, label: { type: 'string' } } },
          },
          { name: 'page', in: 'query', schema: { $ref: '#/components/schemas/Page' } },
        ],
        responses: { '200': { description: 'ok' } },
      },
      post: {
        requestBody: {
          content: {
            'application/x-www-form-urlencoded': { schema: { $ref: '#/components/schemas/Order' } },
            'multipart/form-data': { schema: { $ref: '#/components/schemas/Order' } },
          },
        },
        responses: { '200': { description: 'ok' } },
      },
    },
  });
  (desc.doc as Record<string, unknown>).components = {
    schemas: {
      Page: { type: 'object', properties: { size: { type: 'integer' } } },
      Order: {
        type: 'object',
        properties: {
          amount: { type: 'integer' },
          price: { type: 'number' },
          note: { type: 'string' },
          items: { type: 'array', items: { type: 'integer' } },
          metadata: { type: 'object', properties: { count: { type: 'integer' } } },
        },
      },
    },
  };
  const form = (body: string): RequestInput => ({
    mockPath: '/orders',
    url: '/orders',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: Buffer.from(body),
  });
  const multipart = (fields: Record<string, string>): RequestInput => ({
    mockPath: '/orders',
    url: '/orders',
    headers: { 'content-type': 'multipart/form-data; boundary=b' },
    body: Buffer.from(
      Object.entries(fields)
        .map(([name, value]) => `--b\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
        .join('') + '--b--\r\n',
    ),
  });
  const post = (input: RequestInput) => brief(checkOf(desc, 'POST /orders')(input));
  const query = (url: string) => brief(checkOf(desc, 'GET /orders')(get(url)));

  test('decimal text is read as the number it says', () => {
    expect(post(form('amount=-12&price=2.5e3&note=0x10&items[]=1&items[]=2&metadata[count]=3'))).toEqual([]);
    expect(post(multipart({ amount: '7', price: '0.5', note: 'Infinity' }))).toEqual([]);
    expect(query('/orders?filter[min]=5&filter[label]=0x1&size=10')).toEqual([]);
  });

  test('other text is no number: the schema type is the violation', () => {
    expect(post(form('amount=0x10&price=Infinity&items[]=1&items[]=1e2&metadata[count]=%205'))).toEqual([
      ['body', '/amount', 'type'],
      ['body', '/items/1', 'type'],
      ['body', '/metadata/count', 'type'],
      ['body', '/price', 'type'],
    ]);
    expect(post(multipart({ amount: '1.0' }))).toEqual([['body', '/amount', 'type']]);
    expect(query('/orders?filter[min]=0x5')).toEqual([['query', '/filter/min', 'type']]);
    expect(query('/orders?size=1e1')).toEqual([['query', '/page/size', 'type']]);
  });
});
