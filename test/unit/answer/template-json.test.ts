import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compileTemplate } from '../../../src/expression/index.js';
import { valueJson } from '../../../src/expression/template.js';
import { makeContext } from '../../helpers/answer.js';

const ctx = makeContext({
  params: { id: '42' },
  query: { limit: '3', tag: ['a', 'b'], name: 'Ada "Lovelace"\n' },
  body: { amount: 9.5, nested: { a: [1, null] } },
});

/** Bodies whose JSON text must read exactly as JSON.stringify of the evaluated body. */
const BODIES: unknown[] = [
  {
    id: '${int(params.id)}',
    name: '${query.name}',
    missing: '${query.nope}',
    greeting: 'Hi ${query.name}',
    fixed: { a: 1, b: [true, null] },
  },
  { '2': '${query.missing}', b: 1, '1': '${params.id}', __proto__x: 'x' },
  JSON.parse('{"__proto__": "${params.id}", "k": "${query.none}"}') as unknown,
  { first: '${query.none}', second: '${query.none}' },
  ['${query.none}', '${params.id}', 1, { x: '${query.tag}' }],
  { $repeat: '${query.limit}', $item: { i: '${index}', n: '${query.none}', list: ['${index}', '${query.none}'] } },
  { list: { $repeat: 2, $item: '${body.nested}' }, amount: '${body.amount}', whole: '${body}' },
  { $repeat: 0, $item: 1 },
  { empty: {}, none: [], n: '${now}' },
];

describe('compiled body as JSON text (made without building the body object)', () => {
  for (const [i, body] of BODIES.entries()) {
    it(`body ${i} reads as JSON.stringify of its value`, () => {
      const compiled = compileTemplate(body);
      if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues));
      expect(compiled.value.json?.(ctx)).toBe(JSON.stringify(compiled.value.evaluate(ctx)));
    });
  }

  it('a body that is text or a single expression has no JSON text maker (it may not be JSON)', () => {
    for (const body of ['${params.id}', 'plain ${query.name}']) {
      const compiled = compileTemplate(body);
      expect(compiled.ok && compiled.value.json).toBeUndefined();
    }
  });
});

describe('valueJson: JSON.stringify of one value, quoted directly when nothing needs escaping', () => {
  it('gives JSON.stringify text for any string, number, boolean, null, list or object', () => {
    const anyText = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
    );
    fc.assert(
      fc.property(
        fc.oneof(
          anyText,
          fc.double(),
          fc.integer(),
          fc.boolean(),
          fc.constant(null),
          fc.constant(undefined),
          fc.jsonValue(),
        ),
        (value) => {
          expect(valueJson(value)).toBe(JSON.stringify(value));
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('escapes quotes, backslashes, control characters and lone surrogates', () => {
    for (const text of ['"', '\\', '\u0000', '\n', '\u001f', '\ud800', 'a\udfffb', 'plain', '\u2028', '😀'])
      expect(valueJson(text)).toBe(JSON.stringify(text));
  });
});
