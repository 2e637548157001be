import { describe, expect, it } from 'vitest';
import {
  AnswerTooLarge,
  compileTemplate,
  isStatic,
  MAX_ANSWER_ITEMS,
  MAX_REPEAT,
} from '../../../src/expression/index.js';
import { formatFieldPath } from '../../../src/config/field-path.js';
import { makeContext } from '../../helpers/answer.js';

const ctx = makeContext({ params: { id: '42' }, query: { limit: '3', n: 'x' }, body: { amount: 9.5 } });

function evaluate(body: unknown, context = ctx): unknown {
  const compiled = compileTemplate(body);
  if (!compiled.ok) throw new Error(compiled.issues.map((issue) => issue.message).join('; '));
  return compiled.value.evaluate(context);
}

describe('compileTemplate', () => {
  it.each<[string, unknown, unknown]>([
    ['static object', { a: 1, b: ['x', null, true] }, { a: 1, b: ['x', null, true] }],
    [
      'typed and text values',
      { id: '${int(params.id)}', label: 'user ${params.id}', amount: '${body.amount}' },
      { id: 42, label: 'user 42', amount: 9.5 },
    ],
    ['missing typed value is null', { x: '${body.none}' }, { x: null }],
    ['a top-level string', 'id=${params.id}', 'id=42'],
    ['escape only', { a: '$${not.an.expression}' }, { a: '${not.an.expression}' }],
    ['keys are not expressions', { '${params.id}': 1 }, { '${params.id}': 1 }],
    [
      'repeat a fixed count',
      { list: { $repeat: 3, $item: { n: '${index}' } } },
      { list: [{ n: 0 }, { n: 1 }, { n: 2 }] },
    ],
    ['repeat from the request', { $repeat: '${query.limit}', $item: 'row ${index}' }, ['row 0', 'row 1', 'row 2']],
    ['repeat of a non-number is empty', { $repeat: '${query.n}', $item: 1 }, []],
    ['repeat of a missing count is empty', { $repeat: '${query.none}', $item: 1 }, []],
    ['repeat zero', { $repeat: 0, $item: 'x' }, []],
    ['repeat of a constant item', { $repeat: 2, $item: { a: 1 } }, [{ a: 1 }, { a: 1 }]],
    [
      'nested repeat: index is the inner one',
      { $repeat: 2, $item: { $repeat: 2, $item: '${index}' } },
      [
        [0, 1],
        [0, 1],
      ],
    ],
    [
      'inner count reads the outer index',
      { $repeat: 3, $item: { $repeat: '${index}', $item: 'x' } },
      [[], ['x'], ['x', 'x']],
    ],
    ['repeat inside a list', [1, { $repeat: 1, $item: '${params.id}' }], [1, ['42']]],
  ])('%s', (_name, body, expected) => {
    expect(evaluate(body)).toEqual(expected);
  });

  it('cuts a count from the request to MAX_REPEAT', () => {
    const list = evaluate(
      { $repeat: '${query.limit}', $item: 0 },
      makeContext({ query: { limit: '1e9' } }),
    ) as unknown[];
    expect(list).toHaveLength(MAX_REPEAT);
    expect(evaluate({ $repeat: '${query.limit}', $item: 0 }, makeContext({ query: { limit: '-5' } }))).toEqual([]);
  });

  it('caps the items of all $repeat lists together, counting each list before it is made', () => {
    const grid = { $repeat: '${query.rows}', $item: { $repeat: '${query.cols}', $item: '${index}' } };
    const compiled = compileTemplate(grid);
    if (!compiled.ok) throw new Error('did not compile');
    const big = makeContext({ query: { rows: '10000', cols: '3000' } });
    expect(() => compiled.value.evaluate(big)).toThrow(
      new AnswerTooLarge(
        `The answer is too large: its $repeat lists would hold more than ${MAX_ANSWER_ITEMS} items in all`,
      ),
    );
    expect(() => compiled.value.json?.(big)).toThrow(AnswerTooLarge);
    // 100 lists of 999 and the outer list: 100,000 items, the most an answer makes
    expect(evaluate(grid, makeContext({ query: { rows: '100', cols: '999' } }))).toHaveLength(100);
    // each request starts from nothing
    expect(evaluate(grid, makeContext({ query: { rows: '100', cols: '999' } }))).toHaveLength(100);
  });

  it('caps the text of an answer', () => {
    const compiled = compileTemplate({ echo: { $repeat: 100, $item: '${body}' } });
    if (!compiled.ok) throw new Error('did not compile');
    expect(() => compiled.value.json?.(makeContext({ body: 'x'.repeat(200_000) }))).toThrow(
      'The answer is too large: it would be longer than 16 MiB',
    );
    expect(compiled.value.json?.(makeContext({ body: 'x'.repeat(1000) }))).toHaveLength(100 * 1003 + 10);
  });

  it('a __proto__ key of the config stays a plain key', () => {
    const body = JSON.parse('{"__proto__": {"x": "${params.id}"}}') as unknown;
    const out = evaluate(body) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"x":"42"}}');
  });
});

describe('static bodies', () => {
  it.each<[unknown, boolean]>([
    [{ a: 1, b: 'text with $ and {}' }, true],
    ['plain', true],
    [null, true],
    [[1, [2, { c: 'd' }]], true],
    [{ a: '${params.id}' }, false],
    [{ a: '$${escaped}' }, false],
    [[{ deep: ['${x}'] }], false],
    [{ $repeat: 2, $item: 1 }, false],
  ])('isStatic(%j) is %s, and the compiled template agrees', (body, expected) => {
    expect(isStatic(body)).toBe(expected);
    const compiled = compileTemplate(body);
    if (compiled.ok) expect(compiled.value.static).toBe(expected);
  });

  it('a static body evaluates to the same value every time', () => {
    const compiled = compileTemplate({ a: [1, 2] });
    if (!compiled.ok) throw new Error('did not compile');
    expect(compiled.value.evaluate(ctx)).toBe(compiled.value.evaluate(makeContext()));
  });

  it('says whether faker is needed', () => {
    const withFake = compileTemplate({ a: [{ b: '${fake.person.firstName()}' }] });
    const without = compileTemplate({ a: '${uuid()}' });
    expect(withFake.ok && withFake.value.usesFaker).toBe(true);
    expect(without.ok && [without.value.usesFaker, without.value.usesRandom]).toEqual([false, true]);
  });
});

describe('template issues carry the field path and the offset', () => {
  it.each<[unknown, string, RegExp, number | undefined]>([
    [{ user: { id: '${int(param.id)}' } }, 'body.user.id', /unknown source `param`; did you mean `params`\?/, 6],
    [{ list: ['ok', 'x ${nope()}'] }, 'body.list[1]', /unknown function `nope`/, 4],
    [{ a: '${index}' }, 'body.a', /inside the `\$item`/, 2],
    [{ $repeat: 2 }, 'body.$repeat', /needs an `\$item`/, undefined],
    [{ $item: 1 }, 'body.$item', /needs a `\$repeat`/, undefined],
    [{ $repeat: 2, $item: 1, extra: 1 }, 'body.extra', /cannot stand beside/, undefined],
    [{ $repeat: -1, $item: 1 }, 'body.$repeat', /whole number from 0 to 10000/, undefined],
    [{ $repeat: 1.5, $item: 1 }, 'body.$repeat', /whole number/, undefined],
    [{ $repeat: 'three', $item: 1 }, 'body.$repeat', /whole number or an expression/, undefined],
    [{ $repeat: '${bad(}', $item: 1 }, 'body.$repeat', /expected a value/, 6],
  ])('%j', (body, field, message, offset) => {
    const compiled = compileTemplate(body, { path: ['body'] });
    expect(compiled.ok).toBe(false);
    if (compiled.ok) return;
    const [issue] = compiled.issues;
    expect(formatFieldPath(issue!.path)).toBe(field);
    expect(issue!.message).toMatch(message);
    expect(issue!.offset).toBe(offset);
  });

  it('collects every issue of a body', () => {
    const compiled = compileTemplate({ a: '${x}', b: ['${y}'], c: { $repeat: 1, $item: '${z}' } });
    expect(compiled.ok ? [] : compiled.issues.map((issue) => formatFieldPath(issue.path))).toEqual([
      'a',
      'b[0]',
      'c.$item',
    ]);
  });

  it('passes scenarios and env through to expressions', () => {
    const bad = compileTemplate({ s: '${state.crt}' }, { scenarios: ['cart'] });
    expect(bad.ok ? '' : bad.issues[0]!.message).toMatch(/did you mean `cart`\?/);
    const env = compileTemplate({ t: '${env.MOCKAPI_T}' }, { env: { MOCKAPI_T: 'v' } });
    expect(env.ok && env.value.evaluate(ctx)).toEqual({ t: 'v' });
  });
});
