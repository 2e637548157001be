/**
 * `mockapi-cli/node-test`: a mock server for a `node:test` test file in one call.
 *
 * ```js
 * import { test } from 'node:test';
 * import { useMockServer } from 'mockapi-cli/node-test';
 * const mock = useMockServer({ config: './mockapi.yaml' });
 * test('reads a user', async () => {
 *   const res = await fetch(`${mock.url}/mock/users/1`, { headers: { 'x-api-key': mock.apiKey } });
 * });
 * ```
 */
import { after, before, beforeEach } from 'node:test';
import { registerMockServer, type TestMockServer, type TestServerOptions } from './testing/use-mock-server.js';

export type { TestMockServer, TestServerOptions } from './testing/use-mock-server.js';
export type { MockServer } from './mock-server.js';

/**
 * Starts a mock server before all tests of the file (on port 0, serving a private copy of the
 * config: the committed file is never written), resets it before each test (stubs, journal,
 * usage, rate window, sequences, scenarios, virtual clock, a rotated key), closes it after all.
 * The returned server is usable inside tests and hooks; `apiKey` is the key it accepts.
 */
export function useMockServer(options: TestServerOptions): TestMockServer {
  return registerMockServer(options, { beforeAll: (fn) => before(fn), beforeEach: (fn) => beforeEach(fn), afterAll: (fn) => after(fn) });
}
