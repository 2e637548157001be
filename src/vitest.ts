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
 *
 * Or, for test files that run in parallel against one server started by a global setup
 * (`project.provide('mockapiUrl', server.url)`), a session per test: `useMockServer({ session: true })`.
 */
import * as vitest from 'vitest';
import { registerMockServer, type TestMockServer, type TestServerOptions } from './testing/use-mock-server.js';
import {
  registerMockSession,
  type MockSession,
  type SessionHooks,
  type SharedServerOptions,
} from './testing/use-mock-session.js';

export type { TestMockServer, TestServerOptions } from './testing/use-mock-server.js';
export type { MockSession, SharedServerOptions } from './testing/use-mock-session.js';
export type { MockServer } from './mock-server.js';

/** The key a vitest global setup provides the shared server's URL under: `project.provide('mockapiUrl', server.url)`. */
export const PROVIDED_URL = 'mockapiUrl';

/**
 * A session of its own for each test, on one server started once for the run (a global setup starts
 * it and provides its URL as `mockapiUrl`, or sets `$MOCKAPI_URL`): opened before each test, dropped
 * after it. `url`, `headers`, stubs, waits, the clock and reset act on the test's session.
 * `session: false` shares the server's default session instead (nothing is reset).
 */
export function useMockServer(options: SharedServerOptions): MockSession;
/**
 * Starts a mock server before all tests of the file (on port 0, serving a private copy of the
 * config: the committed file is never written), resets it before each test (stubs, journal,
 * usage, rate window, sequences, scenarios, virtual clock, a rotated key), closes it after all.
 * The returned server is usable inside tests and hooks; `apiKey` is the key it accepts.
 */
export function useMockServer(options: TestServerOptions): TestMockServer;
export function useMockServer(options: TestServerOptions | SharedServerOptions): TestMockServer | MockSession {
  if (!('config' in options)) {
    const { inject, aroundEach } = vitest as unknown as {
      inject?: (key: string) => unknown;
      aroundEach?: (fn: (runTest: () => Promise<void>) => Promise<void>) => void;
    };
    // vitest 4.1 and later: each test runs inside the hook, so tests of `describe.concurrent` each
    // find their own session. Before: by the test's context, one test at a time.
    const hooks: SessionHooks =
      aroundEach === undefined
        ? {
            beforeEach: (fn) => vitest.beforeEach((context) => fn(context, undefined)),
            afterEach: (fn) => vitest.afterEach((context) => fn(context)),
          }
        : { aroundEach: (fn) => aroundEach(fn) };
    return registerMockSession(options, hooks, () => inject?.(PROVIDED_URL));
  }
  if ('session' in options)
    throw new TypeError(
      'useMockServer: `session` connects to a server started once for the run; leave `config` out (the global setup serves it)',
    );
  return registerMockServer(options, {
    beforeAll: (fn, timeoutMs) => vitest.beforeAll(fn, timeoutMs),
    beforeEach: vitest.beforeEach,
    afterAll: vitest.afterAll,
  });
}

declare module 'vitest' {
  /** What a global setup provides: `project.provide('mockapiUrl', server.url)`, read by `useMockServer({ session: true })`. */
  export interface ProvidedContext {
    mockapiUrl: string;
  }
}
