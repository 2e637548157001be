// Where a request path falls under `server.basePath`: table-driven, the default `/mock`, `/v1` and the root.
import { describe, expect, it } from 'vitest';
import { mockPathOf, servedUnderNote } from '../../src/http/base-path.js';
import { createRouter } from '../../src/pipeline/match.js';

const base = (basePath: string) => ({
  basePath,
  basePrefix: `${basePath}/`,
  router: createRouter([{ method: 'GET', path: '/products' }] as never),
});

describe('mockPathOf', () => {
  it.each([
    ['/mock', '/mock/users/42', '/users/42'],
    ['/mock', '/mock', '/'],
    ['/mock', '/mock/', '/'],
    ['/mock', '/mockery', undefined],
    ['/mock', '/users', undefined],
    ['/mock', '/__mockapi/health', undefined],
    ['/v1', '/v1/models', '/models'],
    ['/v1', '/mock/models', undefined],
    ['', '/models', '/models'],
    ['', '/', '/'],
    ['', '/__mockapi/requests', undefined],
    ['', '/__mockapi', undefined],
    ['', '/__mockapix', '/__mockapix'],
  ])('basePath %j, %s → %s', (basePath, path, expected) => {
    expect(mockPathOf(base(basePath), path)).toBe(expected);
  });
});

describe('servedUnderNote', () => {
  it.each([
    ['/mock', 'GET', '/products', 'served under /mock: did you mean /mock/products?'],
    ['/v1', 'GET', '/products', 'served under /v1: did you mean /v1/products?'],
    ['/mock', 'POST', '/products', undefined],
    ['/mock', 'GET', '/nothing', undefined],
    ['/mock', 'GET', '/__mockapi/products', undefined],
  ])('basePath %s, %s %s', (basePath, method, path, expected) => {
    expect(servedUnderNote(base(basePath), method, path)).toBe(expected);
  });
});
