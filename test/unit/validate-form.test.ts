// The form body reader of request validation (and of `when`/`${body.*}` on form bodies).
import { describe, expect, test } from 'vitest';
import { bracketKeys, parseFormBody, parseMultipart } from '../../src/http/form-body.js';
import { bodyValue } from '../../src/http/request-body.js';
import { traceOf } from '../../src/inspector/page/trace.js';
import { paramOf, sortViolations, type Violation } from '../../src/validate/violations.js';

const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe('parseFormBody', () => {
  test('bracket notation nests, repeated names and [] make lists, + and %XX decode', () => {
    expect(
      plain(
        parseFormBody(
          'amount=12&metadata[order_id]=42&metadata[note]=a+b%21&tags[]=x&tags[]=y&tag=1&tag=2&items[0][qty]=3',
        ),
      ),
    ).toEqual({
      amount: '12',
      metadata: { order_id: '42', note: 'a b!' },
      tags: ['x', 'y'],
      tag: ['1', '2'],
      items: [{ qty: '3' }],
    });
  });

  test('names that are not bracket notation stay whole; __proto__ is a plain field', () => {
    expect(bracketKeys('a[b')).toEqual(['a[b']);
    expect(bracketKeys('[x]')).toEqual(['[x]']);
    expect(bracketKeys('a[b]c')).toEqual(['a[b]c']);
    const parsed = parseFormBody('__proto__[polluted]=1&constructor[prototype][x]=2');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(plain(parsed)).toEqual({ ['__proto__']: { polluted: '1' }, constructor: { prototype: { x: '2' } } });
  });

  test('a form body is read as its fields where answers read `body`', () => {
    expect(
      plain(bodyValue(Buffer.from('metadata[order_id]=42'), 'application/x-www-form-urlencoded; charset=utf-8')),
    ).toEqual({ metadata: { order_id: '42' } });
    expect(bodyValue(Buffer.from('metadata[order_id]=42'), 'text/plain')).toBe('metadata[order_id]=42');
  });
});

test('parseMultipart reads each part by name', () => {
  const body = Buffer.from(
    '--XY\r\nContent-Disposition: form-data; name="amount"\r\n\r\n12\r\n--XY\r\nContent-Disposition: form-data; name="meta[k]"\r\n\r\nv\r\n--XY--\r\n',
  );
  expect(plain(parseMultipart(body, 'multipart/form-data; boundary=XY'))).toEqual({ amount: '12', meta: { k: 'v' } });
  expect(parseMultipart(body, 'multipart/form-data')).toBeUndefined();
});

test('violations: params in bracket form, a fixed order whatever the order found', () => {
  expect(paramOf('')).toBeNull();
  expect(paramOf('/metadata/order_id')).toBe('metadata[order_id]');
  expect(paramOf('/a~1b')).toBe('a/b');
  const v = (place: Violation['in'], pointer: string, keyword: string): Violation => ({
    in: place,
    pointer,
    param: paramOf(pointer),
    keyword,
    message: keyword,
  });
  const list = [
    v('body', '/b', 'type'),
    v('query', '/z', 'type'),
    v('body', '/a', 'type'),
    v('path', '/id', 'pattern'),
    v('body', '/a', 'type'),
  ];
  expect(sortViolations(list).map((x) => `${x.in}${x.pointer}`)).toEqual(['path/id', 'query/z', 'body/a', 'body/b']);
});

describe('the inspector trace of a validated request', () => {
  const base = {
    id: 1,
    time: '2026-11-23T10:00:00.000Z',
    method: 'POST',
    path: '/mock/v1/charges',
    query: {},
    headers: {},
    body: '',
    bodyTruncated: false,
    endpoint: 'POST /v1/charges',
    response: 'response',
    status: 200,
    ms: 1,
    step: 'response',
    credential: { via: 'x-api-key', key: 'current' },
    notes: [],
  };
  const amount = {
    in: 'body',
    pointer: '/amount',
    param: 'amount',
    keyword: 'type',
    message: 'body field amount must be integer',
  };

  test('reported: the violations, then the usual answer', () => {
    expect(traceOf({ ...base, violations: [amount] }, undefined)).toEqual([
      'Auth: the current key, sent in the X-API-Key header.',
      'Rate limit and quota: admitted, and counted towards this month.',
      'Match: POST /v1/charges.',
      'OpenAPI validation: 1 violation, reported (X-Mockapi-Violations), answered as usual:',
      '  body /amount (type): body field amount must be integer',
      'Answer: response → 200.',
    ]);
  });

  test('enforced, clean, and not validated', () => {
    expect(
      traceOf({ ...base, step: 'validation', status: 422, response: null, violations: [amount] }, undefined).slice(
        3,
        4,
      ),
    ).toEqual(['OpenAPI validation: 1 violation, enforced → 422:']);
    expect(traceOf({ ...base, violations: [] }, undefined)[3]).toBe(
      'OpenAPI validation: the request follows the description.',
    );
    expect(traceOf(base, undefined)[3]).toBe('Answer: response → 200.');
  });

  test('the parts not checked, and a request not validated at all, in the validation lines (not as server notes)', () => {
    const part =
      'not validated: query parameter q (its schema in the description cannot be compiled; the rest of the request was checked)';
    expect(traceOf({ ...base, violations: [], notes: [part] }, undefined).slice(3)).toEqual([
      'OpenAPI validation: the parts checked follow the description.',
      'OpenAPI validation: not checked: query parameter q (its schema in the description cannot be compiled; the rest of the request was checked).',
      'Answer: response → 200.',
    ]);
    expect(traceOf({ ...base, violations: [amount], notes: [part] }, undefined).slice(5, 6)).toEqual([
      'OpenAPI validation: not checked: query parameter q (its schema in the description cannot be compiled; the rest of the request was checked).',
    ]);
    expect(
      traceOf(
        { ...base, notes: ['not validated: the OpenAPI description cannot be read: broken $ref'] },
        undefined,
      ).slice(3),
    ).toEqual([
      'OpenAPI validation: not checked: the OpenAPI description cannot be read: broken $ref.',
      'Answer: response → 200.',
    ]);
  });
});
