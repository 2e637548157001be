import { describe, expect, it } from 'vitest';
import { closestEndpoint, suggestionNote, type EndpointRef } from '../../src/pipeline/suggest.js';

const endpoints: EndpointRef[] = [
  { method: 'GET', path: '/users/:id' },
  { method: 'GET', path: '/users' },
  { method: 'POST', path: '/orders' },
  { method: 'GET', path: '/orders/:orderId/items' },
  { method: 'GET', path: '/files/*' },
  { method: 'GET', path: '/v1/products/:sku' },
  { method: 'DELETE', path: '/sessions/current' },
];

const show = (e: EndpointRef | undefined): string | undefined => e && `${e.method} ${e.path}`;

const cases: Array<[method: string, path: string, expected: string | undefined]> = [
  // typos in a literal segment
  ['GET', '/user/42', 'GET /users/:id'],
  ['GET', '/usres/42', 'GET /users/:id'],
  ['GET', '/usr/42', 'GET /users/:id'],
  ['GET', '/user', 'GET /users'],
  ['GET', '/v1/product/abc', 'GET /v1/products/:sku'],
  ['GET', '/v2/products/abc', 'GET /v1/products/:sku'],
  ['GET', '/orders/7/itmes', 'GET /orders/:orderId/items'],
  // missing or extra segments
  ['GET', '/users/42/extra', 'GET /users/:id'],
  ['GET', '/orders/7', 'GET /orders/:orderId/items'],
  ['GET', '/v1/products', 'GET /v1/products/:sku'],
  // trailing wildcard matches the rest
  ['GET', '/file/a/b/c', 'GET /files/*'],
  ['GET', '/fils', 'GET /files/*'],
  // another method: the right path is still worth naming
  ['PUT', '/users/42', 'GET /users/:id'],
  ['GET', '/orders', 'POST /orders'],
  ['POST', '/sessions/current', 'DELETE /sessions/current'],
  // HEAD prefers GET endpoints
  ['HEAD', '/user/1', 'GET /users/:id'],
  // lower-case method in the request
  ['get', '/user/1', 'GET /users/:id'],
  // trailing and double slashes are ignored
  ['GET', '/user/42/', 'GET /users/:id'],
  ['GET', '//user//42', 'GET /users/:id'],
  // nothing close
  ['GET', '/nope', undefined],
  ['GET', '/', undefined],
  ['GET', '/posts/1', undefined],
  ['GET', '/completely/different/path/here', undefined],
  ['GET', '/a/b/c/d/e/f', undefined],
  ['POST', '/payments', undefined],
];

describe('closestEndpoint', () => {
  it.each(cases)('%s %s → %s', (method, path, expected) => {
    expect(show(closestEndpoint(method, path, endpoints))).toBe(expected);
  });

  it('prefers the same method on a tie', () => {
    const list = [
      { method: 'POST', path: '/items/:id' },
      { method: 'GET', path: '/items/:id' },
    ];
    expect(show(closestEndpoint('GET', '/item/1', list))).toBe('GET /items/:id');
    expect(show(closestEndpoint('POST', '/item/1', list))).toBe('POST /items/:id');
  });

  it('prefers the closer path over the same method when the method is all that differs', () => {
    const list = [
      { method: 'GET', path: '/widgets' },
      { method: 'POST', path: '/gadgets' },
    ];
    expect(show(closestEndpoint('GET', '/gadgets', list))).toBe('POST /gadgets');
  });

  it('returns the first of equally close endpoints', () => {
    const list = [
      { method: 'GET', path: '/cats' },
      { method: 'GET', path: '/bats' },
    ];
    expect(show(closestEndpoint('GET', '/rats', list))).toBe('GET /cats');
  });

  it('returns the very object from the list', () => {
    const list = [{ method: 'GET', path: '/users/:id', extra: 1 }];
    expect(closestEndpoint('GET', '/user/1', list)).toBe(list[0]);
  });

  it('returns undefined for an empty list', () => {
    expect(closestEndpoint('GET', '/users', [])).toBeUndefined();
  });

  it('copes with huge and odd paths', () => {
    expect(closestEndpoint('GET', '/' + 'x'.repeat(100_000), endpoints)).toBeUndefined();
    expect(closestEndpoint('GET', '/a'.repeat(10_000), endpoints)).toBeUndefined();
    expect(closestEndpoint('GET', '/users/\u0000\ud800', endpoints)).toBe(endpoints[0]);
    expect(show(closestEndpoint('GET', `/users${'s'.repeat(60)}`, endpoints))).toBeUndefined();
  });

  it('sees a list built later under the same array (new length)', () => {
    const list: EndpointRef[] = [{ method: 'GET', path: '/alpha' }];
    expect(closestEndpoint('GET', '/bravo', list)).toBeUndefined();
    list.push({ method: 'GET', path: '/brave' });
    expect(show(closestEndpoint('GET', '/bravo', list))).toBe('GET /brave');
  });

  it('finds the closest among 10,000 endpoints (speed is measured in npm run bench, not here)', () => {
    const many: EndpointRef[] = [];
    for (let i = 0; i < 10_000; i++) {
      many.push({ method: i % 2 ? 'GET' : 'POST', path: `/resource${i}/:id/sub${i % 17}` });
      if (i % 100 === 0) many.push({ method: 'GET', path: `/static${i}/*` });
    }
    many.push({ method: 'GET', path: '/accounts/:id/settings' });
    for (let i = 0; i < 20; i++) {
      expect(show(closestEndpoint('GET', `/acounts/${i}/settings`, many))).toBe('GET /accounts/:id/settings');
      expect(closestEndpoint('GET', `/zzz${i}/qq/rr`, many)).toBeUndefined();
    }
  });
});

describe('suggestionNote', () => {
  it('phrases the suggestion for the 404 log line', () => {
    expect(suggestionNote('GET', '/user/42', endpoints)).toBe('did you mean GET /users/:id?');
    expect(suggestionNote('GET', '/nope', endpoints)).toBeUndefined();
  });

  it('shows the method in upper case', () => {
    expect(suggestionNote('GET', '/user', [{ method: 'get', path: '/users' }])).toBe('did you mean GET /users?');
  });
});
