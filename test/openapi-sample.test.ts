// Bodies generated from schemas: typed, finite for circular schemas, the same on every run.
import { describe, expect, test } from 'vitest';
import samplerModule from 'openapi-sampler';
import { createExpander, sampleBody, type Sampler } from '../src/openapi/sample.js';
import { preferWhen } from '../src/openapi/render.js';
import type { JsonObject } from '../src/openapi/json-pointer.js';

const sampler = (samplerModule as unknown as { sample: Sampler }).sample;
const doc: JsonObject = {
  components: {
    schemas: {
      Node: { type: 'object', required: ['id', 'children'], properties: { id: { type: 'string', format: 'uuid' }, children: { type: 'array', items: { $ref: '#/components/schemas/Node' } }, parent: { $ref: '#/components/schemas/Node' } } },
      Pair: { type: 'object', required: ['other'], properties: { other: { $ref: '#/components/schemas/Pair' } } },
    },
  },
};
const body = (schema: JsonObject) => sampleBody(sampler, createExpander(doc), schema);

describe('sampleBody', () => {
  test.each<[string, JsonObject, unknown]>([
    ['a circular array is empty, a circular optional property left out', { $ref: '#/components/schemas/Node' }, { id: '497f6eca-6276-4993-bfeb-53cbbbba6f08', children: [] }],
    ['a required circular property is an empty object', { $ref: '#/components/schemas/Pair' }, { other: {} }],
    ['formats', { type: 'object', properties: { a: { type: 'string', format: 'date-time' }, b: { type: 'string', format: 'email' }, c: { type: 'string', format: 'uri' } } }, { a: '2019-08-24T14:15:22Z', b: 'user@example.com', c: 'http://example.com' }],
    ['enum, const, 3.1 type list, nullable', { type: 'object', properties: { e: { enum: ['x', 'y'] }, k: { const: 7 }, t: { type: ['integer', 'null'] }, n: { type: 'string', nullable: true } } }, { e: 'x', k: 7, t: 0, n: 'string' }],
    ['readOnly kept, writeOnly left out (a response)', { type: 'object', properties: { r: { type: 'string', readOnly: true }, w: { type: 'string', writeOnly: true } } }, { r: 'string' }],
    ['allOf merged, first oneOf/anyOf alternative', { allOf: [{ type: 'object', properties: { a: { type: 'integer', minimum: 5 } } }, { properties: { o: { oneOf: [{ type: 'boolean' }, { type: 'string' }] }, y: { anyOf: [{ type: 'string', enum: ['red'] }, { type: 'null' }] } } }] }, { a: 5, o: true, y: 'red' }],
  ])('%s', (_, schema, expected) => {
    expect(body(schema)).toEqual(expected);
    expect(body(schema)).toEqual(body(schema)); // deterministic
  });
});

describe('preferWhen', () => {
  const matches = (name: string, header: string) => new RegExp((preferWhen(name)['headers.prefer'] as { matches: string }).matches).test(header);
  test.each([
    ['foo', 'example=foo', true],
    ['foo', 'example="foo"', true],
    ['foo', 'respond-async, example=foo; x=1', true],
    ['foo', 'example=foobar', false],
    ['foobar', 'example=foo', false],
    ['a.b', 'example=axb', false],
    ['dog (old)', 'example="dog (old)"', true],
  ])('%s against Prefer: %s → %s', (name, header, expected) => {
    expect(matches(name, header)).toBe(expected);
  });
});
