// The router: find-my-way behind a memo of recent matches (src/pipeline/match.ts). A fresh router,
// whose memo is empty, is the oracle for a long-lived one that has seen many requests.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { createRouter, type Route } from '../../src/pipeline/match.js';

const METHODS = ['GET', 'POST', 'HEAD', 'DELETE'] as const;
const segment = fc.constantFrom('users', 'orders', 'a', 'b', ':id', ':name', '42', 'x');

const routes: fc.Arbitrary<Route[]> = fc
  .array(
    fc.record({
      method: fc.constantFrom('GET', 'POST', 'DELETE'),
      path: fc
        .tuple(fc.array(segment, { minLength: 1, maxLength: 3 }), fc.boolean())
        .map(([parts, star]) => `/${parts.join('/')}${star ? '/*' : ''}`),
    }),
    { maxLength: 8 },
  )
  .map((list) => {
    // find-my-way refuses duplicate and conflicting routes; keep the first of each shape
    const seen = new Set<string>();
    return list.filter((r) => {
      const shape = `${r.method} ${r.path.replace(/:[a-z]+/g, ':')}`;
      if (seen.has(shape)) return false;
      seen.add(shape);
      return true;
    });
  });
const requestPath = fc
  .array(fc.constantFrom('users', 'orders', 'a', 'b', '42', 'x', '', 'y'), { minLength: 1, maxLength: 4 })
  .map((p) => `/${p.join('/')}`);

describe('createRouter', () => {
  test('a router that has answered before answers every request as a fresh router does', () => {
    fc.assert(
      fc.property(
        routes,
        fc.array(fc.tuple(fc.constantFrom(...METHODS), requestPath), { minLength: 1, maxLength: 60 }),
        (list, requests) => {
          const router = createRouter(list);
          for (const [method, path] of requests) {
            // asked twice: the second answer may come from the memo
            const fresh = createRouter(list).match(method, path);
            expect(router.match(method, path)).toBe(fresh);
            expect(router.match(method, path)).toBe(fresh);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  test('the memo is per method, HEAD falls back to GET, and it stays right past its size', () => {
    const router = createRouter([
      { method: 'GET', path: '/users/:id' },
      { method: 'POST', path: '/users/:id' },
      { method: 'HEAD', path: '/only-head' },
    ]);
    expect(router.match('GET', '/users/1')).toBe(0);
    expect(router.match('POST', '/users/1')).toBe(1);
    expect(router.match('HEAD', '/users/1')).toBe(0);
    expect(router.match('DELETE', '/users/1')).toBeUndefined();
    expect(router.match('GET', '/only-head')).toBeUndefined();
    expect(router.match('HEAD', '/only-head')).toBe(2);
    // 5,000 distinct paths (the memo keeps 1,024 a method), then the first ones again
    for (let i = 0; i < 5000; i++) expect(router.match('GET', `/users/${i}`)).toBe(0);
    for (let i = 0; i < 10; i++) expect(router.match('POST', `/users/${i}`)).toBe(1);
    expect(router.match('GET', '/users/1/extra')).toBeUndefined();
    const long = `/users/${'z'.repeat(4000)}`;
    expect(router.match('GET', long)).toBe(0);
    expect(router.match('GET', long)).toBe(0);
    expect(router.match('GET', `${long}/more`)).toBeUndefined();
  });

  test('a trailing * also matches the empty rest, unless an endpoint has exactly that path', () => {
    const router = createRouter([
      { method: 'GET', path: '/files/*' },
      { method: 'GET', path: '/docs/*' },
      { method: 'GET', path: '/docs' },
      { method: 'GET', path: '/orgs/:org/*' },
      { method: 'GET', path: '/orgs/:name' },
      { method: 'POST', path: '/orgs/:org/*' },
      { method: 'GET', path: '/*' },
    ]);
    const cases: Array<[string, string, number | undefined]> = [
      ['GET', '/files', 0],
      ['GET', '/files/', 0],
      ['GET', '/files/a/b', 0],
      ['HEAD', '/files', 0],
      ['GET', '/docs', 2],
      ['GET', '/docs/', 2],
      ['GET', '/docs/x', 1],
      ['GET', '/orgs/acme', 4], // `/orgs/:name` is the path before the `*` of `/orgs/:org/*`
      ['GET', '/orgs/acme/x', 3],
      ['POST', '/orgs/acme', 5],
      ['POST', '/orgs/acme/', 5],
      ['POST', '/orgs', undefined],
      ['GET', '/', 6],
      ['GET', '/filesx', 6],
    ];
    for (const [method, path, expected] of cases) {
      expect([method, path, router.match(method, path)]).toEqual([method, path, expected]);
      expect([method, path, router.match(method, path)]).toEqual([method, path, expected]); // from the memo
    }
  });

  test('a :param of any length matches (find-my-way alone stops at 100 characters)', () => {
    const router = createRouter([
      { method: 'GET', path: '/users/:id' },
      { method: 'GET', path: '/users/:id/posts/:post' },
    ]);
    for (const length of [100, 101, 8 * 1024, 8 * 1024 + 1, 9 * 1024, 64 * 1024]) {
      expect(router.match('GET', `/users/${'p'.repeat(length)}`)).toBe(0);
      expect(router.match('GET', `/users/1/posts/${'q'.repeat(length)}`)).toBe(1);
      expect(router.match('GET', `/users/${'%C3%A9'.repeat(length)}`)).toBe(0);
    }
  });
});
