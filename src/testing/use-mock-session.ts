import { AsyncLocalStorage } from 'node:async_hooks';
import { connectMockServer } from '../connect.js';
import type { ControlCalls } from '../control/calls.js';
import { ControlError } from '../control/control-error.js';
import type { StubCalls } from '../stubs/calls.js';
import type { WebhookCalls } from '../webhooks/calls.js';

/** The baggage entry's key that names a session. */
const BAGGAGE_ENTRY = 'mockapi.session';

/** The variable a global setup sets to the shared server's base URL (vitest: also `provide('mockapiUrl', url)`). */
export const URL_VARIABLE = 'MOCKAPI_URL';

/** Options of the test helpers against one server started once per run (a global setup starts it). */
export interface SharedServerOptions {
  /**
   * `true`: each test gets a session of its own (its stubs, journal, clock, limits), dropped after
   * it. `false`: every test shares the server's default session, and nothing is reset.
   */
  session: boolean;
  /** The server's base URL. Default: what the global setup provided (`mockapiUrl` in vitest), else `$MOCKAPI_URL`. */
  url?: string;
  /** Sent as `X-Mockapi-Admin-Token`. Default: `$MOCKAPI_ADMIN_TOKEN`. */
  adminToken?: string;
}

/**
 * One test's view of the shared server: the control and stub calls act on its session, `url`
 * carries the session's prefix and `headers` its header, so the code under test is pointed at it
 * with either.
 */
export interface MockSession extends ControlCalls, StubCalls {
  /** The session's id; undefined with `session: false` (the default session). */
  readonly id: string | undefined;
  /** The server's base URL with the session's prefix (`http://127.0.0.1:4010/__session/<id>`): `${url}/mock/…` is in the session. */
  readonly url: string;
  /** The header that names the session (`X-Mockapi-Session`), for a client whose base URL cannot change. */
  readonly headers: Readonly<Record<string, string>>;
  /** The W3C Baggage entry that names the session (`mockapi.session=<id>`), for an app that propagates OpenTelemetry context. */
  readonly baggage: string | undefined;
  /** The key made for the session when the server has `sessions.byKey`: valid in this session alone. */
  readonly key: string | undefined;
  /** The server's base URL, without the session. */
  readonly serverUrl: string;
  readonly webhooks: WebhookCalls;
}

/**
 * How a test runner tells the shared-server helper which test runs. `aroundEach` (vitest 4.1 and
 * later): the test runs inside the callback, so each of its awaits (tests of `describe.concurrent`
 * included) finds its own session. Otherwise `beforeEach`/`afterEach` with a key per test (the
 * runner's test context) and, for a subtest, its running parent's key: the subtest shares the
 * parent's session.
 */
export type SessionHooks =
  | { aroundEach(fn: (runTest: () => Promise<void>) => Promise<void>): void }
  | {
      beforeEach(fn: (key: unknown, parent: unknown) => Promise<void>): void;
      afterEach(fn: (key: unknown) => Promise<void>): void;
    };

/** The shared server's URL: given, else provided by the runner's global setup, else `$MOCKAPI_URL`. */
function serverUrl(options: SharedServerOptions, provided: () => unknown): string {
  const url = options.url ?? provided() ?? process.env[URL_VARIABLE];
  if (typeof url === 'string' && url !== '') return url.replace(/\/+$/, '');
  throw new Error(
    `useMockServer({ session: ${String(options.session)} }) connects to a server started once for the run, and found none: ` +
      `start it in a global setup and provide its URL (vitest: project.provide('mockapiUrl', server.url); other runners: ${URL_VARIABLE}=<url>), or pass { url }`,
  );
}

/** Opens a session on the server at `url` (`POST /__mockapi/sessions`). */
async function openSession(
  url: string,
  adminToken: string | undefined,
): Promise<{ id: string; url: string; headers: Record<string, string>; key?: string }> {
  try {
    return await connectMockServer(url, { ...(adminToken === undefined ? {} : { adminToken }) }).sessions.create();
  } catch (err) {
    if (err instanceof ControlError && err.code === 'not_found')
      throw new ControlError(404, 'not_found', `the server at ${url} has no sessions (is it mockapi 0.2 or later?)`);
    throw err;
  }
}

/**
 * Opens the current test's session on the shared server (`POST /__mockapi/sessions`), or, with
 * `session: false`, connects to its default session.
 */
export async function openMockSession(
  options: SharedServerOptions,
  provided: () => unknown = () => undefined,
): Promise<MockSession> {
  const base = serverUrl(options, provided);
  const token = options.adminToken === undefined ? {} : { adminToken: options.adminToken };
  if (!options.session)
    return withSession(connectMockServer(base, token), {
      id: undefined,
      url: base,
      headers: {},
      baggage: undefined,
      key: undefined,
      serverUrl: base,
    });
  const opened = await openSession(base, options.adminToken);
  const calls = connectMockServer(base, { session: opened.id, ...token });
  return withSession(calls, {
    id: opened.id,
    url: opened.url,
    headers: opened.headers,
    baggage: `${BAGGAGE_ENTRY}=${opened.id}`,
    key: opened.key,
    serverUrl: base,
  });
}

/** Drops a test's session with everything it holds (one dropped already, by `sessions.ttl` or the test, is fine). */
export async function closeMockSession(
  session: MockSession,
  options: Pick<SharedServerOptions, 'adminToken'> = {},
): Promise<void> {
  if (session.id === undefined) return;
  await connectMockServer(session.serverUrl, options.adminToken === undefined ? {} : { adminToken: options.adminToken })
    .sessions.delete(session.id)
    .catch((err: unknown) => {
      if (!(err instanceof ControlError && err.status === 404)) throw err;
    });
}

const OUTSIDE_TESTS =
  'the mock session exists inside tests (and beforeEach/afterEach hooks registered after useMockServer), not at the top of the file or in beforeAll';

/**
 * Registers a session per test with a runner's hooks: opened before each test on the shared server
 * (`POST /__mockapi/sessions`), dropped after it, so nothing a test leaves (stubs, requests, a moved
 * clock, counted limits) reaches another, however many run at once. A subtest (node:test's
 * `t.test`) shares its parent's session, which is dropped after the parent. Returns the current
 * test's session, usable inside tests and `beforeEach`/`afterEach` hooks registered after this call.
 */
export function registerMockSession(
  options: SharedServerOptions,
  hooks: SessionHooks,
  provided: () => unknown = () => undefined,
): MockSession {
  if ('aroundEach' in hooks) {
    const running = new AsyncLocalStorage<MockSession>();
    hooks.aroundEach(async (runTest) => {
      const session = await openMockSession(options, provided);
      try {
        await running.run(session, runTest);
      } finally {
        await closeMockSession(session, options);
      }
    });
    return sessionView(() => {
      const session = running.getStore();
      if (session === undefined) throw new Error(OUTSIDE_TESTS);
      return session;
    });
  }
  /** The running tests' sessions, by the runner's key; `own`: the test opened it (a subtest shares its parent's). */
  const open = new Map<unknown, { session: MockSession; own: boolean }>();
  hooks.beforeEach(async (key, parent) => {
    const shared = parent === undefined ? undefined : open.get(parent);
    if (shared !== undefined) open.set(key, { session: shared.session, own: false });
    else open.set(key, { session: await openMockSession(options, provided), own: true });
  });
  hooks.afterEach(async (key) => {
    const ending = open.get(key);
    open.delete(key);
    if (ending?.own === true) await closeMockSession(ending.session, options);
  });
  return sessionView(() => {
    const sessions = new Set([...open.values()].map((entry) => entry.session));
    const [session, other] = sessions;
    if (session === undefined) throw new Error(OUTSIDE_TESTS);
    if (other !== undefined)
      throw new Error(
        "several tests of this file hold a mock session at once, and this runner does not say which one is running here: run the tests one at a time (subtests share their parent's session), or use vitest 4.1 or later",
      );
    return session;
  });
}

/** The session `current()` names, read at each use (so one object serves every test). */
function sessionView(current: () => MockSession): MockSession {
  return new Proxy({} as MockSession, {
    get: (_target, name) => Reflect.get(current(), name) as unknown,
    has(_target, name) {
      try {
        return name in current();
      } catch {
        return false;
      }
    },
  });
}

function withSession(
  calls: ReturnType<typeof connectMockServer>,
  fields: Pick<MockSession, 'id' | 'url' | 'headers' | 'baggage' | 'key' | 'serverUrl'>,
): MockSession {
  const { sessions: _sessions, ...rest } = calls;
  return { ...rest, ...fields };
}
