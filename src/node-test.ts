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
 *
 * Or, for test files that run in parallel against one server started before them (its URL in
 * `$MOCKAPI_URL`), a session per test: `useMockServer({ session: true })`.
 */
import { after, afterEach, before, beforeEach } from 'node:test';
import { registerMockServer, type TestMockServer, type TestServerOptions } from './testing/use-mock-server.js';
import { registerMockSession, type MockSession, type SharedServerOptions } from './testing/use-mock-session.js';

export type { TestMockServer, TestServerOptions } from './testing/use-mock-server.js';
export type { MockSession, SharedServerOptions } from './testing/use-mock-session.js';
export type { MockServer } from './mock-server.js';

/**
 * A session of its own for each test, on one server started once for the run (its URL in
 * `$MOCKAPI_URL`, or `{ url }`): opened before each test, dropped after it. `url`, `headers`, stubs,
 * waits, the clock and reset act on the test's session. `session: false` shares the server's
 * default session instead (nothing is reset).
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
  const tests = runningTests();
  if (!('config' in options))
    return registerMockSession(options, {
      beforeEach: (fn) =>
        beforeEach((t) => {
          const { key, parent } = tests.enter(t);
          return fn(key, parent);
        }),
      afterEach: (fn) => afterEach((t) => fn(tests.leave(t))),
    });
  if ('session' in options)
    throw new TypeError(
      'useMockServer: `session` connects to a server started once for the run; leave `config` out (the server is started before the tests)',
    );
  return registerMockServer(options, {
    beforeAll: (fn, timeoutMs) => before(fn, { timeout: timeoutMs }),
    // A subtest runs inside its parent: resetting before it would wipe what the parent set up.
    beforeEach: (fn) => {
      beforeEach(async (t) => {
        if (tests.enter(t).parent === undefined) await fn();
      });
      afterEach((t) => void tests.leave(t));
    },
    afterAll: (fn) => after(fn),
  });
}

/** What node:test hands a hook: the test's context (`fullName`: `outer > inner` for a subtest; Node 20.16 and later). */
interface HookContext {
  readonly name: string;
  readonly fullName?: string;
}

/**
 * node:test's running tests, by full name. The root hooks run for subtests too (`t.test`), and a
 * subtest starts while its parent runs: its parent is the running test whose name, followed by
 * ` > `, begins its own.
 */
function runningTests(): {
  enter(t: HookContext): { key: string; parent: string | undefined };
  leave(t: HookContext): string;
} {
  const running = new Set<string>();
  const nameOf = (t: HookContext) => t.fullName ?? t.name;
  return {
    enter(t) {
      const key = nameOf(t);
      let parent: string | undefined;
      for (const name of running)
        if (key.startsWith(`${name} > `) && (parent === undefined || name.length > parent.length)) parent = name;
      running.add(key);
      return { key, parent };
    },
    leave(t) {
      const key = nameOf(t);
      running.delete(key);
      return key;
    },
  };
}
