// Bodies generated from schemas: typed, finite for circular schemas, the same on every run.
import { describe, expect, test } from 'vitest';
import samplerModule from 'openapi-sampler';
import { sampleBody, type Sampler } from '../../src/openapi/sample.js';
import { createExpander } from '../../src/openapi/schema-expand.js';
import { preferWhen } from '../../src/openapi/render.js';
import RandExp from 'randexp';
import { createPatternString, type RandExpClass } from '../../src/openapi/pattern.js';
import type { JsonObject } from '../../src/description/json-pointer.js';

const sampler = (samplerModule as unknown as { sample: Sampler }).sample;
const doc: JsonObject = {
  components: {
    schemas: {
      Node: {
        type: 'object',
        required: ['id', 'children'],
        properties: {
          id: { type: 'string', format: 'uuid' },
          children: { type: 'array', items: { $ref: '#/components/schemas/Node' } },
          parent: { $ref: '#/components/schemas/Node' },
        },
      },
      Pair: { type: 'object', required: ['other'], properties: { other: { $ref: '#/components/schemas/Pair' } } },
    },
  },
};
const body = (schema: JsonObject) => sampleBody(sampler, createExpander(doc), schema);

describe('sampleBody', () => {
  test.each<[string, JsonObject, unknown]>([
    [
      'a circular array is empty, a circular optional property left out',
      { $ref: '#/components/schemas/Node' },
      { id: '497f6eca-6276-4993-bfeb-53cbbbba6f08', children: [] },
    ],
    ['a required circular property is an empty object', { $ref: '#/components/schemas/Pair' }, { other: {} }],
    [
      'formats',
      {
        type: 'object',
        properties: {
          a: { type: 'string', format: 'date-time' },
          b: { type: 'string', format: 'email' },
          c: { type: 'string', format: 'uri' },
        },
      },
      { a: '2019-08-24T14:15:22Z', b: 'user@example.com', c: 'http://example.com' },
    ],
    [
      'enum, const, 3.1 type list, nullable',
      {
        type: 'object',
        properties: {
          e: { enum: ['x', 'y'] },
          k: { const: 7 },
          t: { type: ['integer', 'null'] },
          n: { type: 'string', nullable: true },
        },
      },
      { e: 'x', k: 7, t: 0, n: 'string' },
    ],
    [
      'readOnly kept, writeOnly left out (a response)',
      { type: 'object', properties: { r: { type: 'string', readOnly: true }, w: { type: 'string', writeOnly: true } } },
      { r: 'string' },
    ],
    [
      'allOf merged, first oneOf/anyOf alternative',
      {
        allOf: [
          { type: 'object', properties: { a: { type: 'integer', minimum: 5 } } },
          {
            properties: {
              o: { oneOf: [{ type: 'boolean' }, { type: 'string' }] },
              y: { anyOf: [{ type: 'string', enum: ['red'] }, { type: 'null' }] },
            },
          },
        ],
      },
      { a: 5, o: true, y: 'red' },
    ],
  ])('%s', (_, schema, expected) => {
    expect(body(schema)).toEqual(expected);
    expect(body(schema)).toEqual(body(schema)); // deterministic
  });
});

describe('preferWhen', () => {
  const matches = (name: string, header: string) =>
    new RegExp((preferWhen(name)['headers.prefer'] as { matches: string }).matches).test(header);
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

/** k objects, each with a field per other object: `anyOf: [string, $ref other]` (or a plain `$ref` when `direct`). */
function meshDoc(k: number, direct: boolean): JsonObject {
  const schemas: JsonObject = {};
  for (let i = 0; i < k; i++) {
    const properties: JsonObject = {};
    for (let j = 0; j < k; j++) {
      if (j === i) continue;
      const ref = { $ref: `#/components/schemas/O${j}` };
      properties[`f${j}`] = direct ? ref : { anyOf: [{ type: 'string' }, ref] };
    }
    schemas[`O${i}`] = { type: 'object', properties };
  }
  return { components: { schemas } };
}

describe('schemas whose objects refer to each other along many paths', () => {
  test.each([10, 30])(
    'k=%i objects of k-1 `anyOf: [string, $ref]` fields: only the taken alternative is expanded',
    (k) => {
      const mesh = meshDoc(k, false);
      const value = sampleBody(sampler, createExpander(mesh), { $ref: '#/components/schemas/O0' }) as Record<
        string,
        unknown
      >;
      expect(Object.keys(value)).toHaveLength(k - 1);
      expect(Object.values(value).every((v) => v === 'string')).toBe(true);
    },
    10_000,
  );

  test.each([10, 30])(
    'k=%i objects of k-1 plain `$ref` fields: bounded by the budget, the same on every run',
    (k) => {
      const mesh = meshDoc(k, true);
      const expander = createExpander(mesh);
      const value = sampleBody(sampler, expander, { $ref: '#/components/schemas/O0' });
      expect(JSON.stringify(value).length).toBeLessThan(5_000_000);
      expect(sampleBody(sampler, createExpander(mesh), { $ref: '#/components/schemas/O0' })).toEqual(value);
      expect(sampleBody(sampler, expander, { $ref: '#/components/schemas/O1' })).toBeTypeOf('object');
    },
    10_000,
  );
});

describe('null alternatives and patterns', () => {
  test.each<[string, JsonObject, unknown]>([
    ['oneOf with null first samples the type', { oneOf: [{ type: 'null' }, { type: 'integer', minimum: 3 }] }, 3],
    [
      'anyOf with null first samples the type',
      { type: 'object', properties: { a: { anyOf: [{ type: 'null' }, { $ref: '#/components/schemas/Pair' }] } } },
      { a: { other: {} } },
    ],
    ['3.1 type list with null first', { type: ['null', 'boolean'] }, true],
    ['only null', { anyOf: [{ type: 'null' }] }, null],
  ])('%s', (_, schema, expected) => {
    expect(body(schema)).toEqual(expected);
  });
});

describe('strings for a pattern', () => {
  const patternString = createPatternString(RandExp as unknown as RandExpClass);
  const withPatterns = (schema: JsonObject) => sampleBody(sampler, createExpander(doc, { patternString }), schema);
  test.each([
    ['^[A-Z]{2}[0-9]{6}$', 0, Infinity],
    ['^(ch|re|pi)_[a-zA-Z0-9]{24}$', 0, Infinity],
    ['^\\d+(\\.\\d+)?$', 0, Infinity],
    ['^[a-z]+$', 3, 5],
    ['^AC[0-9a-f]{32}$', 34, 34],
  ])('%s (length %i–%s): a matching value, the same on every run', (pattern, min, max) => {
    const schema = {
      type: 'object',
      properties: { s: { type: 'string', pattern, minLength: min, ...(max === Infinity ? {} : { maxLength: max }) } },
    };
    const value = (withPatterns(schema) as { s: string }).s;
    expect(value).toMatch(new RegExp(pattern, 'u'));
    expect(value.length).toBeGreaterThanOrEqual(min);
    expect(value.length).toBeLessThanOrEqual(max);
    expect(withPatterns(schema)).toEqual({ s: value });
  });

  test("a pattern it cannot honour leaves the sampler's value; an example in the schema wins", () => {
    expect(withPatterns({ type: 'string', pattern: '^(?!x)\\w(?<=a)$' })).toBe('string');
    expect(withPatterns({ type: 'string', pattern: '^[0-9]+$', example: '42' })).toBe('42');
  });
});

describe('references that pass through another reference (bundlers write them)', () => {
  test('`#/…/owner/oneOf/1` where `owner` is itself a `$ref` reaches the alternative', () => {
    const through: JsonObject = {
      components: {
        schemas: {
          A: { type: 'object', properties: { owner: { $ref: '#/components/schemas/B' } } },
          B: { oneOf: [{ type: 'string' }, { type: 'integer', minimum: 7 }] },
        },
      },
    };
    expect(
      sampleBody(sampler, createExpander(through), { $ref: '#/components/schemas/A/properties/owner/oneOf/1' }),
    ).toBe(7);
  });
});
