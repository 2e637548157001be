/**
 * `mockapi-cli/vitest`: a mock server for a vitest test file in one call.
 *
 * ```ts
 * import { useMockServer } from 'mockapi-cli/vitest';
 * const mock = useMockServer({ config: './mockapi.yaml' });
 * test('retries a 503', async () => {
 *   await mock.stub({ method: 'GET', path: '/users/:id', response: { status: 503 } }, { times: 1 });
 *   // … the client under test calls `${mock.url}/mock/users/1` …
 * });
 * ```
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
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
  return registerMockServer(options, { beforeAll, beforeEach, afterAll });
}
