// The stubs' router: find-my-way routes that come and go, each a stack of stubs, newest first —
// also across routes of different specificity that match the same path.
import { describe, expect, test } from 'vitest';
import { createStubRouter, type RoutedStub } from '../../src/stubs/stub-router.js';

let seq = 0;
const stub = (method: string, path: string): RoutedStub => ({ method, path, seq: ++seq });

describe('createStubRouter', () => {
  test.each([
    // routes added in this order, request, the index of the stub that answers (undefined: none)
    [['/a/7', '/a/:id'], '/a/7', 1],
    [['/a/:id', '/a/7'], '/a/7', 1],
    [['/a/:id', '/a/7'], '/a/8', 0],
    [['/a/*', '/a/:id/b'], '/a/1/b', 1],
    [['/a/:id/b', '/a/*'], '/a/1/b', 1],
    [['/a/:id/b', '/a/*'], '/a', 1],
    [['/a/:id', '/a/:name'], '/a/1', 1],
    [['/a/:id'], '/a/1/', 0],
    [['/a/:id'], '/b/1', undefined],
    [['/*'], '/', 0],
  ] as const)('%j, %s → %s', (paths, path, expected) => {
    const router = createStubRouter<RoutedStub>();
    const stubs = paths.map((p) => stub('GET', p));
    stubs.forEach((s) => router.add(s));
    expect(router.match('GET', path)).toBe(expected === undefined ? undefined : stubs[expected]);
    expect(router.match('POST', path)).toBeUndefined();
  });

  test('removing the newest uncovers the one below it; removing the last frees the route', () => {
    const router = createStubRouter<RoutedStub>();
    const [old, mid, young] = [stub('GET', '/x'), stub('GET', '/x/'), stub('GET', '/x')];
    for (const s of [old!, mid!, young!]) router.add(s);
    expect(router.match('GET', '/x')).toBe(young);
    router.remove(young!);
    expect(router.match('GET', '/x')).toBe(mid);
    router.remove(mid!);
    router.remove(old!);
    expect(router.match('GET', '/x')).toBeUndefined();
    expect(router.size).toBe(0);
    const again = stub('GET', '/x');
    router.add(again); // the route can be registered anew
    expect(router.match('GET', '/x')).toBe(again);
    router.clear();
    expect(router.match('GET', '/x')).toBeUndefined();
  });

  test('a route left without stubs no longer hides a less specific one', () => {
    const router = createStubRouter<RoutedStub>();
    const [param, literal] = [stub('GET', '/a/:id'), stub('GET', '/a/7')];
    router.add(param!);
    router.add(literal!);
    expect(router.match('GET', '/a/7')).toBe(literal);
    router.remove(literal!);
    expect(router.match('GET', '/a/7')).toBe(param);
  });

  test('many routes removed one by one: what remains still matches, what went does not', () => {
    const router = createStubRouter<RoutedStub>();
    const stubs = Array.from({ length: 10_000 }, (_, i) => stub('GET', i % 2 ? `/r${i}/:id` : `/r${i}`));
    stubs.forEach((s) => router.add(s));
    stubs.slice(0, 9_990).forEach((s) => router.remove(s)); // emptied routes are rebuilt away now and then
    expect(router.size).toBe(10);
    expect(router.match('GET', '/r9998')).toBe(stubs[9998]);
    expect(router.match('GET', '/r9999/x')).toBe(stubs[9999]);
    expect(router.match('GET', '/r2')).toBeUndefined();
    expect(router.match('GET', '/r3/x')).toBeUndefined();
    router.add(stubs[2]!);
    expect(router.match('GET', '/r2')).toBe(stubs[2]);
  });
});
