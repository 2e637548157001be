import type { MockServer, MockServerOptions } from '../mock-server.js';
import { privateCopy, type PrivateCopy } from './private-copy.js';

/** Options of the test helpers: `startMockServer`'s, with `config` required and `port` 0 by default. */
export interface TestServerOptions extends Omit<MockServerOptions, 'config'> {
  /** The config file (relative to the working folder) or a config object. The server serves a private copy of it. */
  config: string | Record<string, unknown>;
}

/** The server a test helper hands to the tests: the running server, and the key it accepts. */
export interface TestMockServer extends MockServer {
  /**
   * The config's `apiKey` as the server now accepts it (after a test's rotation, the new one; the
   * committed one again in the next test), so a test need not repeat the key:
   * `fetch(url, { headers: { 'x-api-key': mock.apiKey } })`.
   */
  readonly apiKey: string;
}

/** The lifecycle hooks of a test runner. */
export interface TestHooks {
  /** `timeoutMs`: how long the server may take to start (runners whose hooks time out by default take it). */
  beforeAll(fn: () => Promise<void>, timeoutMs: number): void;
  beforeEach(fn: () => Promise<void>): void;
  afterAll(fn: () => Promise<void>): void;
}

/**
 * Registers a mock server with a test runner's hooks: started before all tests on a private copy of
 * the config (so nothing a test does, a key rotation included, writes the committed file), reset
 * before each test (journal, usage, rate window, sequences, scenarios, virtual clock, stubs; the
 * copy back to the original's bytes), closed after all. Returns the server, usable inside tests,
 * with `apiKey`, the key it now accepts.
 */
/**
 * How long starting the server may take before the runner gives up: a large config (an imported
 * description of thousands of operations) or a loaded CI machine takes far longer than a runner's
 * default hook timeout (vitest's 10 s), and the time depends on the config, not on the test code.
 */
export const START_TIMEOUT_MS = 120_000;

export function registerMockServer(options: TestServerOptions, hooks: TestHooks): TestMockServer {
  let server: MockServer | undefined;
  let copy: PrivateCopy | undefined;
  hooks.beforeAll(async () => {
    copy = await privateCopy(options.config);
    try {
      // Loaded here, not with the helper: a file that only connects to a shared server (`session`)
      // never loads the server, and each of a parallel run's workers starts faster.
      const { startMockServer } = await import('../mock-server.js');
      server = await startMockServer({ port: 0, ...options, config: copy.file, linkedFolder: copy.linkedFolder });
    } catch (err) {
      await copy.remove();
      throw err;
    }
  }, START_TIMEOUT_MS);
  hooks.beforeEach(async () => {
    if (server === undefined || copy === undefined) return;
    if (await copy.restore()) await server.reload();
    await server.reset();
  });
  hooks.afterAll(async () => {
    await server?.close();
    await copy?.remove();
    server = undefined;
  });
  return new Proxy({} as TestMockServer, {
    get(_target, name) {
      if (server === undefined)
        throw new Error(
          `the mock server is not running here: use it inside tests or hooks (it starts before all tests and closes after them), not at the top of the file`,
        );
      if (name === 'apiKey') return server.config.apiKey;
      return Reflect.get(server, name) as unknown;
    },
    has: (_target, name) => server !== undefined && (name === 'apiKey' || name in server),
  });
}
