// The shape comparison of `mockapi verify` (src/verify/compare.ts): each kind of drift at its JSON
// path, volatile values and ignored paths never reported, enum-like strings as documented.
import { describe, expect, it } from 'vitest';
import { compareAnswers, type ComparedAnswer } from '../../src/verify/compare.js';
import { compileIgnore } from '../../src/verify/ignore.js';
import { parseIgnore } from '../../src/config/verify-ignore.js';
import { isEnumField, isTokenValue, isVolatileKey } from '../../src/verify/volatile.js';

const json = (value: unknown, status = 200, mediaType = 'application/json'): ComparedAnswer => ({
  status,
  mediaType,
  body: Buffer.from(JSON.stringify(value)),
});
const compare = (
  mock: unknown,
  upstream: unknown,
  ignore: string[] = [],
  extra: { expect?: number; method?: string } = {},
) =>
  compareAnswers(json(mock), json(upstream), {
    method: extra.method ?? 'GET',
    expect: extra.expect,
    ignore: compileIgnore(ignore),
    secretName: (n) => /secret|token/i.test(n),
  }).map((c) => `${c.kind} ${c.path}: ${c.message}`);

describe('compareAnswers: drift by JSON path', () => {
  it.each([
    [
      'same shape, other values (ids, times, hashes, names, numbers)',
      { id: 'cus_1A2b3C4d5E', created: '2024-01-01T00:00:00Z', sha: 'a'.repeat(40), name: 'Ada', n: 1 },
      { id: 'cus_9Z8y7X6w5V', created: '2026-05-07T10:11:12Z', sha: 'b'.repeat(40), name: 'Grace', n: 2.5 },
      [],
    ],
    [
      'a field renamed',
      { user: { name: 'Ada', age: 3 } },
      { user: { full_name: 'Ada', age: 3 } },
      ['renamed $.user.name: renamed to $.user.full_name (string)'],
    ],
    ['a type changed', { amount: 100 }, { amount: '100' }, ['type $.amount: type number → string']],
    ['a new required field', { a: 1 }, { a: 1, currency: 'usd' }, ['added $.currency: new in the upstream (string)']],
    ['a field gone', { a: 1, b: true }, { a: 1 }, ['removed $.b: missing from the upstream (the mock has boolean)']],
    [
      'an enum value added',
      { status: 'active' },
      { status: 'past_due' },
      ['enum $.status: new value "past_due" (the mock sends "active")'],
    ],
    [
      'an enum value added in a list',
      { data: [{ status: 'active' }, { status: 'canceled' }] },
      { data: [{ status: 'active' }, { status: 'trialing' }] },
      ['enum $.data[].status: new value "trialing" (the mock sends "active", "canceled")'],
    ],
    ['array items change type', { tags: ['a'] }, { tags: [{ name: 'a' }] }, ['type $.tags[]: type string → object']],
    [
      'array items gain a field',
      { items: [{ sku: 'sku-1' }] },
      {
        items: [
          { sku: 'sku-1', qty: 1 },
          { sku: 'sku-2', qty: 2 },
        ],
      },
      ['added $.items[].qty: new in the upstream (number)'],
    ],
    [
      'array items gain an optional field',
      { items: [{ sku: 'sku-1' }] },
      { items: [{ sku: 'sku-1', note: 'n' }, { sku: 'sku-2' }] },
      ['added $.items[].note: new in the upstream (string, in 1 of 2)'],
    ],
    [
      'a new object is reported once, not field by field',
      { a: 1 },
      { a: 1, address: { city: 'X', zip: '1' } },
      ['added $.address: new in the upstream (object)'],
    ],
    [
      'object became a list: one change',
      { owner: { id: 1 } },
      { owner: [{ id: 1 }] },
      ['type $.owner: type object → array'],
    ],
    [
      'null where the mock has a string',
      { nickname: 'a' },
      { nickname: null },
      ['type $.nickname: type string → null'],
    ],
    ['an empty list on either side says nothing of its items', { data: [] }, { data: [{ id: 1 }] }, []],
    [
      'a field optional in the mock and absent upstream is no drift',
      { data: [{ a: 1, b: 2 }, { a: 1 }] },
      { data: [{ a: 1 }] },
      [],
    ],
    [
      'maps keyed by ids are one shape',
      { users: { u_1a2b3c4d: { email: 'a' } } },
      { users: { u_9z8y7x6w: { email: 'b' }, u_5v4u3t2s: { email: 'c' } } },
      [],
    ],
    [
      'a map keyed by ids whose values changed shape',
      { users: { '42': { email: 'a' } } },
      { users: { '7': { mail: 'b' } } },
      ['renamed $.users.*.email: renamed to $.users.*.mail (string)'],
    ],
    ['a key with spaces is quoted', { 'odd key': 1 }, { 'odd key': 'x' }, ['type $["odd key"]: type number → string']],
    [
      'free text, names, ids and emails are not enums',
      { title: 'draft', customer_id: 'abc', email: 'a@b.c', note: 'one' },
      { title: 'final', customer_id: 'xyz', email: 'x@y.z', note: 'two' },
      [],
    ],
    ['mixed-case text is not an enum', { plan: 'Gold Plan' }, { plan: 'Silver Plan' }, []],
    ['values under secret-named fields are never read as enums', { token: 'abc' }, { token: 'xyz' }, []],
    ['codes with digits are data', { plan: 'tier-1' }, { plan: 'tier-2' }, []],
    [
      'a list of six or more different words is data, not an enum',
      { fruit: ['apple'] },
      { fruit: ['apple', 'pear', 'plum', 'fig', 'kiwi', 'lime'] },
      [],
    ],
    [
      'a repeated word in a list stays an enum',
      { s: ['on', 'on', 'on', 'on', 'on', 'on'] },
      { s: ['on', 'on', 'on', 'off', 'on', 'on'] },
      ['enum $.s[]: new value "off" (the mock sends "on")'],
    ],
  ])('%s', (_name, mock, upstream, expected) => {
    expect(compare(mock, upstream)).toEqual(expected);
  });

  it("status, content type and the example's expected status", () => {
    const opts = { method: 'GET', ignore: compileIgnore([]), secretName: () => false };
    expect(compareAnswers(json({ a: 1 }, 200), json({ a: 1 }, 201), opts)).toEqual([
      { kind: 'status', path: 'status', mock: '200', upstream: '201', message: 'mock 200, upstream 201' },
    ]);
    expect(compareAnswers(json({ a: 1 }), json({ a: 1 }, 200, 'text/html'), opts).map((c) => c.message)).toEqual([
      'mock application/json, upstream text/html',
    ]);
    expect(
      compareAnswers(json({ a: 1 }, 404), json({ a: 1 }, 404), { ...opts, expect: 200 }).map((c) => c.message),
    ).toEqual(['both answer 404; the example expects 200']);
    // A HEAD answer has no body: status and content type only.
    expect(
      compareAnswers(
        { status: 200, mediaType: 'application/json', body: Buffer.alloc(0) },
        { status: 200, mediaType: 'application/json', body: Buffer.alloc(0) },
        { ...opts, method: 'HEAD' },
      ),
    ).toEqual([]);
    // A status that differs: the bodies (an error against a resource) are not compared too.
    expect(compareAnswers(json({ id: 1 }, 200), json({ error: 'gone' }, 404), opts)).toHaveLength(1);
  });

  it('bodies that are not JSON, or missing on one side', () => {
    const opts = { method: 'GET', ignore: compileIgnore([]), secretName: () => false };
    expect(
      compareAnswers(
        json({ a: 1 }),
        { status: 200, mediaType: 'application/json', body: Buffer.from('<html>') },
        opts,
      ).map((c) => c.message),
    ).toEqual(["the upstream's body is not valid JSON (content-type application/json)"]);
    expect(
      compareAnswers({ status: 200, mediaType: 'application/json', body: Buffer.alloc(0) }, json({ a: 1 }), opts).map(
        (c) => c.message,
      ),
    ).toEqual(['the mock answers with no body, the upstream with JSON']);
    expect(
      compareAnswers(
        { status: 200, mediaType: 'text/plain', body: Buffer.from('a') },
        { status: 200, mediaType: 'text/plain', body: Buffer.from('b') },
        opts,
      ),
    ).toEqual([]);
  });

  it('a comparison of a body with thousands of items stays one change per path', () => {
    const items = (extra: boolean) =>
      Array.from({ length: 5000 }, (_, i) => ({ id: i, sku: `sku-${i}`, ...(extra ? { qty: i } : {}) }));
    expect(compare({ items: items(false) }, { items: items(true) })).toEqual([
      'added $.items[].qty: new in the upstream (number)',
    ]);
  });
});

describe('verify.ignore', () => {
  it.each([
    ['$.user.name', { user: { name: 'a' } }, { user: { name: 1 } }],
    ['$.user', { user: { name: 'a' } }, { user: { name: 1, x: 2 } }],
    ['$.items[].id', { items: [{ id: 'a' }] }, { items: [{ id: 1 }] }],
    ['$.items[*].id', { items: [{ id: 'a' }] }, { items: [{ id: 1 }] }],
    ['$.items[0].id', { items: [{ id: 'a' }] }, { items: [{ id: 1 }] }],
    ['$..etag', { a: { b: { etag: 'x' } } }, { a: { b: { etag: 1 } } }],
    ['etag', { a: [{ etag: 'x' }] }, { a: [{ etag: 1 }] }],
    ['*_at', { created_at: 1, meta: { updated_at: 2 } }, { created_at: 'x', meta: { updated_at: 'y' } }],
    ['$.*.status', { a: { status: 'on' }, b: { status: 'on' } }, { a: { status: 'off' }, b: { status: 'new' } }],
    ['$["odd key"]', { 'odd key': 1 }, { 'odd key': 'x' }],
    ['$.users.*.email', { users: { '42': { email: 'a' } } }, { users: { '7': { email: 1 } } }],
  ])('%s covers what it names, and what is under it', (pattern, mock, upstream) => {
    expect(compare(mock, upstream)).not.toEqual([]);
    expect(compare(mock, upstream, [pattern])).toEqual([]);
  });

  it('leaves the rest compared', () => {
    expect(compare({ a: 1, b: 1 }, { a: 'x', b: 'x' }, ['$.a'])).toEqual(['type $.b: type number → string']);
  });

  it.each([
    ['', 'must not be empty'],
    ['a.b', 'must be a JSON path starting with `$` (such as $.user.name) or a field name alone (such as updated_at)'],
    ['$.a[b]', 'has `[b]`: write `[]` for the items of a list, or a quoted field name such as ["odd name"]'],
    ['$.a[', 'has a `[` without its `]`'],
    ['$a', 'has `a` where a `.` or `[` was expected, at character 2'],
    ['$.a..', 'has a `.` without a field name after it, at character 5'],
  ])('%j is refused: %s', (pattern, problem) => {
    expect(parseIgnore(pattern)).toBe(problem);
  });
});

describe('what is volatile and what is enum-like', () => {
  it.each([
    '42',
    '2f1c4a3e-7b8d-4c1a-9e2f-0a1b2c3d4e5f',
    'cus_NffrFeUfNV2Hib',
    'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3',
    '2026-01-31',
    '2026-01-31T10:00:00Z',
  ])('the key %s is data', (key) => {
    expect(isVolatileKey(key)).toBe(true);
  });
  it.each(['name', 'status', 'data', 'created_at'])('the key %s is a field', (key) => {
    expect(isVolatileKey(key)).toBe(false);
  });
  it.each(['active', 'past_due', 'in-progress', 'checkout.session.completed', 'USD', 'ACTIVE'])(
    '%s may be an enum value',
    (value) => {
      expect(isTokenValue(value)).toBe(true);
    },
  );
  it.each([
    'Ada',
    'iPhone',
    'two words',
    'v2',
    'sku-1',
    'cus_NffrFeUfNV2Hib',
    '2026-01-31',
    'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3',
    'x'.repeat(41),
    '',
  ])('%j is not', (value) => {
    expect(isTokenValue(value)).toBe(false);
  });
  it.each([
    ['status', true],
    ['type', true],
    ['currency', true],
    ['name', false],
    ['last_name', false],
    ['customerId', false],
    ['Description', false],
    ['created_at', false],
    ['email', false],
  ])('the field %s holds enum-like values: %s', (name, yes) => {
    expect(isEnumField(name)).toBe(yes);
  });
});
