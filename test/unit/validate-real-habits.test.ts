// Request validation on what real descriptions write, each case a minimal reproduction of one seen
// in a public description: GitHub's `cwes` query parameter (`oneOf: [string, array of string]`),
// GitHub's and Stripe's `nullable: true` beside `allOf`, OpenAI's and Discord's 3.1 files with 3.0
// habits (`nullable`, boolean `exclusiveMinimum`), an `enum: []`, and a schema ajv cannot compile
// beside others that it can.
import { beforeAll, describe, expect, test } from 'vitest';
import { indexOperations, type Description } from '../../src/description/description.js';
import { compileAll } from '../../src/validate/compile-operation.js';
import { operationChecker, type RequestInput } from '../../src/validate/request.js';
import { loadAjv, schemaSet } from '../../src/validate/schemas.js';
import type { JsonObject } from '../../src/description/json-pointer.js';
import { checkOf, getRequest } from '../helpers/operation-check.js';

beforeAll(async () => {
  await loadAjv();
});

function describe_(
  version: string,
  paths: Record<string, unknown>,
  components: Record<string, unknown> = {},
): Description {
  return indexOperations(
    { openapi: version, info: { title: 't', version: '1' }, paths, components } as JsonObject,
    version,
  );
}

const get = getRequest;
const postJson = (path: string, body: unknown): RequestInput => ({
  mockPath: path,
  url: path,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from(JSON.stringify(body)),
});

describe('a parameter whose schema is a choice of alternatives', () => {
  // GitHub GET /advisories: `cwes: { oneOf: [{type: string}, {type: array, items: {type: string}}] }`.
  const desc = describe_('3.0.3', {
    '/advisories': {
      get: {
        parameters: [
          {
            name: 'cwes',
            in: 'query',
            schema: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
          },
          { name: 'id', in: 'query', schema: { oneOf: [{ type: 'integer' }, { type: 'string', pattern: '^GHSA-' }] } },
          { name: 'page', in: 'query', schema: { type: 'integer' } },
        ],
        responses: { '200': { description: 'ok' } },
      },
    },
  });

  test.each([
    ['/advisories?cwes=79'],
    ['/advisories?cwes=79,284'],
    ['/advisories?cwes=79&cwes=284'],
    ['/advisories?id=5'],
    ['/advisories?id=GHSA-1'],
    ['/advisories'],
  ])('%s is valid', (url) => {
    expect(checkOf(desc, 'GET /advisories')(get(url))).toEqual([]);
  });

  test('a value no alternative takes is refused; the other parameters are still checked', () => {
    const violations = checkOf(desc, 'GET /advisories')(get('/advisories?id=x&page=two'));
    expect(violations.map((v) => [v.param, v.keyword])).toEqual([
      ['id', 'oneOf'],
      ['id', 'pattern'],
      ['id', 'type'],
      ['page', 'type'],
    ]);
  });
});

describe('nullable', () => {
  const address = { type: 'object', required: ['city'], properties: { city: { type: 'string' } } };
  const body = (schema: Record<string, unknown>): Record<string, unknown> => ({
    requestBody: { content: { 'application/json': { schema } } },
    responses: { '200': { description: 'ok' } },
  });
  const order = {
    type: 'object',
    properties: {
      shipping: { nullable: true, allOf: [{ $ref: '#/components/schemas/Address' }] },
      billing: { nullable: true, $ref: '#/components/schemas/Address' },
      payer: { nullable: true, oneOf: [{ $ref: '#/components/schemas/Address' }, { type: 'string' }] },
      note: { nullable: true, anyOf: [{ type: 'string' }] },
      kind: { type: 'string', nullable: true, enum: ['a', 'b'] },
    },
  };

  test.each([['3.0.3'], ['3.1.0']])(
    'in a %s file: null is taken beside allOf, $ref, oneOf, anyOf and enum; the rest still validates',
    (version) => {
      const desc = describe_(
        version,
        { '/orders': { post: body({ $ref: '#/components/schemas/Order' }) } },
        { schemas: { Address: address, Order: order } },
      );
      const check = checkOf(desc, 'POST /orders');
      expect(
        check(postJson('/orders', { shipping: null, billing: null, payer: null, note: null, kind: null })),
      ).toEqual([]);
      expect(check(postJson('/orders', { shipping: { city: 'Oslo' }, payer: 'me', kind: 'a' }))).toEqual([]);
      expect(check(postJson('/orders', { shipping: {} })).map((v) => [v.pointer, v.keyword])).toEqual([
        ['/shipping/city', 'required'],
      ]);
      expect(check(postJson('/orders', { kind: 'c' })).map((v) => [v.pointer, v.keyword])).toEqual([['/kind', 'enum']]);
    },
  );

  test('a $ref into a nullable schema (as bundlers write them) still resolves', () => {
    const desc = describe_(
      '3.0.3',
      {
        '/orders': {
          post: body({
            type: 'object',
            properties: { city: { $ref: '#/components/schemas/Order/properties/shipping/allOf/0/properties/city' } },
          }),
        },
      },
      { schemas: { Address: address, Order: order } },
    );
    const check = checkOf(desc, 'POST /orders');
    expect(check(postJson('/orders', { city: 'Oslo' }))).toEqual([]);
    expect(check(postJson('/orders', { city: 5 })).map((v) => [v.pointer, v.keyword])).toEqual([['/city', 'type']]);
  });
});

describe('3.1 files with 3.0 habits, and schemas ajv cannot compile', () => {
  // OpenAI's 3.1 description: `temperature: { type: number, nullable: true, minimum: 0, exclusiveMinimum: true }`.
  const desc = describe_('3.1.0', {
    '/chat/completions': {
      post: {
        parameters: [
          { name: 'broken', in: 'query', schema: { type: 'string', pattern: '(' } },
          { name: 'limit', in: 'query', schema: { type: 'integer', maximum: 100 } },
        ],
        requestBody: {
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: {
                  temperature: { type: 'number', nullable: true, minimum: 0, exclusiveMinimum: true, maximum: 2 },
                  retired: { type: 'string', enum: [] },
                },
              },
            },
          },
        },
        responses: { '200': { description: 'ok' } },
      },
    },
  });
  const post = (url: string, value: unknown): RequestInput => ({ ...postJson('/chat/completions', value), url });

  test('nullable and a boolean exclusiveMinimum are read the 3.0 way; enum [] takes nothing', () => {
    const check = checkOf(desc, 'POST /chat/completions');
    expect(check(post('/chat/completions', { temperature: null }))).toEqual([]);
    expect(check(post('/chat/completions', { temperature: 1 }))).toEqual([]);
    expect(check(post('/chat/completions', { temperature: 0 })).map((v) => [v.pointer, v.keyword])).toEqual([
      ['/temperature', 'exclusiveMinimum'],
    ]);
    expect(check(post('/chat/completions', { retired: 'x' })).map((v) => v.pointer)).toEqual(['/retired']);
  });

  test('one parameter whose schema cannot compile leaves the others and the body validated; compileAll names it with its pointer', () => {
    const check = checkOf(desc, 'POST /chat/completions');
    expect(
      check(post('/chat/completions?broken=x&limit=500', { temperature: 0 })).map((v) => [v.in, v.param, v.keyword]),
    ).toEqual([
      ['query', 'limit', 'maximum'],
      ['body', 'temperature', 'exclusiveMinimum'],
    ]);
    const problems = compileAll(desc, schemaSet(desc));
    expect(problems.map(({ operation, part, pointer }) => ({ operation, part, pointer }))).toEqual([
      {
        operation: 'POST /chat/completions',
        part: 'query parameter broken',
        pointer: '/paths/~1chat~1completions/post/parameters/0/schema',
      },
    ]);
  });
});

test('the parts a request was not checked against are named to it: a parameter each time, a body of the media type whose schema cannot compile', () => {
  const desc = describe_('3.0.3', {
    '/files': {
      post: {
        parameters: [{ name: 'q', in: 'query', schema: { type: 'string', pattern: '([' } }],
        requestBody: {
          content: {
            'application/json': { schema: { type: 'string', pattern: '([' } },
            'application/x-www-form-urlencoded': { schema: { type: 'object', properties: { n: { type: 'integer' } } } },
          },
        },
        responses: { '200': { description: 'ok' } },
      },
    },
  });
  const { check } = operationChecker(desc, schemaSet(desc), desc.operations.get('POST /files')!);
  const asked = (input: RequestInput): string[] => {
    const unchecked: string[] = [];
    check(input, unchecked);
    return unchecked;
  };
  expect(asked(postJson('/files?q=x', 'a'))).toEqual(['query parameter q', 'request body (application/json)']);
  // Not compiled again, still named.
  expect(asked(postJson('/files', 'a'))).toEqual(['query parameter q', 'request body (application/json)']);
  const form: RequestInput = {
    mockPath: '/files',
    url: '/files',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: Buffer.from('n=x'),
  };
  const unchecked: string[] = [];
  expect(check(form, unchecked).map((v) => v.param)).toEqual(['n']);
  expect(unchecked).toEqual(['query parameter q']);
});
