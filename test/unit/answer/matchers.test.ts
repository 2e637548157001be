import { describe, expect, it } from 'vitest';
import { compileWhen, includesPartial, MATCH_INPUT_LIMIT, type RequestContext } from '../../../src/expression/index.js';
import { formatFieldPath } from '../../../src/config/field-path.js';
import { makeContext } from '../../helpers/answer.js';

const ctx = makeContext({
  params: { id: '7', name: 'Ada' },
  query: { page: '3', tag: ['red', 'blue'], q: '' },
  headers: { 'x-tenant': 'acme', 'content-type': 'application/json' },
  cookies: { session: 'abc' },
  body: {
    amount: 120,
    currency: 'EUR',
    paid: false,
    note: null,
    items: [
      { sku: 'A1', qty: 2 },
      { sku: 'B2', qty: 1 },
    ],
    tags: ['vip', 'new'],
    user: { name: 'Ada', roles: ['admin'] },
  },
  request: 3,
  state: { order: 'created' },
});

function holds(when: unknown, context: RequestContext = ctx): boolean {
  const compiled = compileWhen(when, { scenarios: ['order', 'cart'] });
  if (!compiled.ok)
    throw new Error(compiled.issues.map((issue) => `${formatFieldPath(issue.path)} ${issue.message}`).join('\n'));
  return compiled.value.test(context);
}

describe('when: sources and matchers', () => {
  it.each<[string, Record<string, unknown>, boolean]>([
    ['param as text', { 'params.id': '7' }, true],
    ['param compared as text with a number', { 'params.id': 7 }, true],
    ['param mismatch', { 'params.id': '8' }, false],
    ['header in any case', { 'headers.X-Tenant': 'acme' }, true],
    ['header lower case', { 'headers.x-tenant': 'acme' }, true],
    ['cookie', { 'cookies.session': 'abc' }, true],
    ['query', { 'query.page': '3' }, true],
    ['repeated query: any value', { 'query.tag': 'blue' }, true],
    ['repeated query: none', { 'query.tag': 'green' }, false],
    ['request number', { request: 3 }, true],
    ['request gt', { request: { gt: 2 } }, true],
    ['state', { 'state.order': 'created' }, true],
    ['state of another scenario (unset)', { 'state.cart': { exists: false } }, true],
    ['body number as JSON', { 'body.amount': 120 }, true],
    ['body number is not text', { 'body.amount': '120' }, false],
    ['body boolean', { 'body.paid': false }, true],
    ['body null', { 'body.note': null }, true],
    ['body list index path', { 'body.items.1.sku': 'B2' }, true],
    ['body missing path', { 'body.items.5.sku': { exists: false } }, true],
    ['whole body includes', { body: { includes: { currency: 'EUR' } } }, true],
    ['in', { 'params.id': { in: ['6', '7'] } }, true],
    ['in mismatch', { 'params.id': { in: ['1', 2] } }, false],
    ['in for body', { 'body.currency': { in: ['USD', 'EUR'] } }, true],
    ['matches', { 'params.name': { matches: '^A' } }, true],
    ['matches with flags', { 'params.name': { matches: '/^ada$/i' } }, true],
    ['matches without flags is case-sensitive', { 'params.name': { matches: '^ada$' } }, false],
    ['matches on a body number', { 'body.amount': { matches: '^1\\d\\d$' } }, true],
    ['matches on a missing value', { 'params.none': { matches: '.*' } }, false],
    ['exists true', { 'params.id': { exists: true } }, true],
    ['exists on empty query value', { 'query.q': { exists: true } }, true],
    ['exists false', { 'headers.authorization': { exists: false } }, true],
    ['gt on text', { 'query.page': { gt: 2 } }, true],
    ['gte/lte range', { 'body.amount': { gte: 100, lte: 120 } }, true],
    ['lt fails', { 'body.amount': { lt: 120 } }, false],
    ['gt on non-numeric text', { 'params.name': { gt: 0 } }, false],
    ['contains text', { 'headers.content-type': { contains: 'json' } }, true],
    ['contains in a JSON list', { 'body.tags': { contains: 'vip' } }, true],
    ['contains is membership for lists', { 'body.tags': { contains: 'vi' } }, false],
    ['includes partial object', { 'body.items': { includes: [{ sku: 'A1' }] } }, true],
    ['includes nested', { 'body.user': { includes: { roles: ['admin'] } } }, true],
    ['includes mismatch', { 'body.user': { includes: { roles: ['owner'] } } }, false],
    ['not scalar', { 'params.id': { not: '404' } }, true],
    ['not matcher', { 'params.id': { not: { in: ['7'] } } }, false],
    ['not exists', { 'params.none': { not: { exists: true } } }, true],
    ['not on repeated query negates the whole', { 'query.tag': { not: 'red' } }, false],
    ['several keys: all hold', { 'query.page': { gt: 1, lt: 5, matches: '^\\d$' } }, true],
    ['several keys: one fails', { 'query.page': { gt: 1, lt: 3 } }, false],
    ['several entries: all hold', { 'params.id': '7', 'headers.x-tenant': 'acme' }, true],
    ['several entries: one fails', { 'params.id': '7', 'headers.x-tenant': 'other' }, false],
    ['empty when holds', {}, true],
  ])('%s', (_name, when, expected) => {
    expect(holds(when)).toBe(expected);
  });

  it('failing() names the entries that do not hold', () => {
    const compiled = compileWhen({ 'params.id': '7', 'query.page': '9', request: { lt: 2 } });
    expect(compiled.ok && compiled.value.failing(ctx)).toEqual(['query.page', 'request']);
  });

  it('matches sees only the first MATCH_INPUT_LIMIT characters', () => {
    const long = makeContext({ params: { blob: `${'a'.repeat(MATCH_INPUT_LIMIT)}END` } });
    expect(holds({ 'params.blob': { matches: 'END' } }, long)).toBe(false);
    expect(holds({ 'params.blob': { matches: '^a+$' } }, long)).toBe(true);
  });

  it('a text body does not crash body paths', () => {
    expect(holds({ 'body.a': { exists: false } }, makeContext({ body: 'plain text' }))).toBe(true);
    expect(holds({ body: { contains: 'plain' } }, makeContext({ body: 'plain text' }))).toBe(true);
  });
});

describe('when: every mistake is an issue with its field path', () => {
  it.each<[unknown, string, RegExp]>([
    [{ 'param.id': '7' }, 'when["param.id"]', /not a known source; did you mean `params.id`\?/],
    [{ 'header.x': '1' }, 'when["header.x"]', /did you mean `headers.x`\?/],
    [{ requests: 1 }, 'when.requests', /did you mean `request`\?/],
    [{ 'params.': '1' }, 'when["params."]', /needs a name after `params.`/],
    [{ params: '1' }, 'when.params', /needs a name after `params.`/],
    [{ 'state.ordr': 'x' }, 'when["state.ordr"]', /unknown scenario `ordr`; did you mean `order`\?/],
    [{ 'body.__proto__.x': 1 }, 'when["body.__proto__.x"]', /cannot read `__proto__`/],
    [{ 'body.a..b': 1 }, 'when["body.a..b"]', /empty step/],
    [{ 'params.id': { matches: '(' } }, 'when["params.id"].matches', /not a valid regular expression/],
    [{ 'params.id': { matches: 5 } }, 'when["params.id"].matches', /regular expression as text/],
    [{ 'params.id': { match: 'x' } }, 'when["params.id"].match', /not a known matcher; did you mean `matches`\?/],
    [{ 'params.id': { in: [] } }, 'when["params.id"].in', /non-empty list/],
    [{ 'params.id': { in: [{}] } }, 'when["params.id"].in[0]', /must be a value/],
    [{ 'params.id': { exists: 'yes' } }, 'when["params.id"].exists', /true or false/],
    [{ 'params.id': { gt: '5' } }, 'when["params.id"].gt', /must be a number/],
    [{ 'params.id': { contains: 5 } }, 'when["params.id"].contains', /must be text/],
    [{ 'params.id': { not: { matches: '[' } } }, 'when["params.id"].not.matches', /not a valid regular expression/],
    [{ 'params.id': ['1', '2'] }, 'when["params.id"]', /write \{ in: \[\.\.\.\] \}/],
    [{ 'params.id': {} }, 'when["params.id"]', /empty matcher/],
    [{ 'params.id': null }, 'when["params.id"]', /exists: false/],
    ['params.id', 'when', /must be a mapping/],
  ])('%j', (when, field, message) => {
    const compiled = compileWhen(when, { scenarios: ['order'] });
    expect(compiled.ok).toBe(false);
    if (compiled.ok) return;
    expect(compiled.issues).toHaveLength(1);
    expect(formatFieldPath(compiled.issues[0]!.path)).toBe(field);
    expect(compiled.issues[0]!.message).toMatch(message);
  });

  it('reports every problem at once, under the given path', () => {
    const compiled = compileWhen(
      { 'x.y': 1, 'params.id': { matches: '(' } },
      { path: ['endpoints', 0, 'responses', 1, 'when'] },
    );
    expect(compiled.ok ? [] : compiled.issues.map((issue) => formatFieldPath(issue.path))).toEqual([
      'endpoints[0].responses[1].when["x.y"]',
      'endpoints[0].responses[1].when["params.id"].matches',
    ]);
  });
});

describe('includesPartial', () => {
  it.each<[unknown, unknown, boolean]>([
    [{ a: 1, b: 2 }, { a: 1 }, true],
    [{ a: 1 }, { a: 1, b: 2 }, false],
    [{ a: { b: [1, 2, 3] } }, { a: { b: [3, 1] } }, true],
    [[{ id: 1, x: 1 }, { id: 2 }], [{ id: 2 }], true],
    [[1, 2], [3], false],
    [5, '5', false],
    [{ a: null }, { a: null }, true],
    [[], {}, false],
    [Object.create({ inherited: 1 }) as unknown, { inherited: 1 }, false],
  ])('%j includes %j → %s', (value, pattern, expected) => {
    expect(includesPartial(value, pattern)).toBe(expected);
  });
});
