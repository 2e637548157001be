import type { UsageReport } from '../control/control-plane.js';
import { jsonBody } from '../control/call-input.js';
import type { StubOperations } from './operations.js';
import { stubTooLarge } from './stub-error.js';
import type { StubCreated, StubInfo } from './store.js';

/** Options of {@link StubCalls.stub}. */
export interface StubOptions {
  /** Answers this many times, then the stub is removed (default: until removed). */
  times?: number;
  /** Names the stub in the journal (`endpoint: "stub <name>: GET /x"`), logs and `stubs()`; unique among the stubs. */
  name?: string;
}

/** A stub added by {@link StubCalls.stub}. */
export interface StubHandle {
  id: string;
  name: string | null;
  /** Removes the stub (a stub already gone — its `times` used up — is not an error). */
  remove(): Promise<void>;
}

/**
 * Run-time stubs and usage, on `startMockServer`'s object and on `connectMockServer` alike (the
 * same answers as the admin API's `/__mockapi/stubs` and `POST /__mockapi/usage`).
 */
export interface StubCalls {
  /**
   * Adds an endpoint (one `endpoints[]` item of the config, as an object) that answers before the
   * config's endpoints, newest first, through every step a configured endpoint goes through.
   * Rejects with a `StubInvalidError` listing every problem, checked as the config is.
   */
  stub(endpoint: Record<string, unknown>, options?: StubOptions): Promise<StubHandle>;
  /** Every stub, newest first, with its remaining count and hits. */
  stubs(): Promise<StubInfo[]>;
  /** Removes every stub. */
  clearStubs(): Promise<void>;
  /** Sets this month's request count (to reach the quota edge without sending them); resolves with the usage. */
  setUsage(requests: number, options?: { key?: string }): Promise<UsageReport>;
  /** Sets a meter (its window holds `value` now, or its month or total is `value`); resolves with the usage. */
  setMeter(meter: string, value: number, options?: { key?: string }): Promise<UsageReport>;
}

/** How an HTTP client calls the admin API: method, path under `/__mockapi/`, JSON body. */
export type AdminCall = <T>(method: string, path: string, body?: unknown) => Promise<T>;

function stubBody(endpoint: Record<string, unknown>, options: StubOptions): Record<string, unknown> {
  return {
    endpoint,
    ...(options.times === undefined ? {} : { times: options.times }),
    ...(options.name === undefined ? {} : { name: options.name }),
  };
}

/** The calls in process, over the server's {@link StubOperations}; `maxBodySize`: the served config's `server.maxBodySize`. */
export function stubCalls(ops: StubOperations, maxBodySize: () => number): StubCalls {
  const handle = (created: StubCreated): StubHandle => ({
    id: created.id,
    name: created.name,
    remove: () => ops.remove(created.id).then(nothing, ignoreGone),
  });
  // Each body as the admin API reads it once sent as JSON: the same answer to the same mistake, and
  // a stub over `server.maxBodySize` (measured as the JSON `connectMockServer` sends) the same 413.
  return {
    stub: async (endpoint, options = {}) => {
      const limit = maxBodySize();
      return handle(await ops.add(jsonBody(stubBody(endpoint, options), limit, stubTooLarge(limit))));
    },
    stubs: () => ops.list(),
    clearStubs: () => ops.clear(),
    setUsage: async (requests, options = {}) =>
      ops.setUsage(jsonBody({ requests, ...(options.key === undefined ? {} : { key: options.key }) })),
    setMeter: async (meter, value, options = {}) =>
      ops.setUsage(jsonBody({ meter, value, ...(options.key === undefined ? {} : { key: options.key }) })),
  };
}

/** The calls over HTTP (`connectMockServer`). */
export function httpStubCalls(call: AdminCall): StubCalls {
  const handle = (created: StubCreated): StubHandle => ({
    id: created.id,
    name: created.name,
    remove: () => call('DELETE', `stubs/${encodeURIComponent(created.id)}`).then(nothing, ignoreGone),
  });
  return {
    stub: async (endpoint, options = {}) =>
      handle(await call<StubCreated>('POST', 'stubs', stubBody(endpoint, options))),
    stubs: async () => (await call<{ stubs: StubInfo[] }>('GET', 'stubs')).stubs,
    clearStubs: async () => {
      await call('DELETE', 'stubs');
    },
    setUsage: (requests, options = {}) =>
      call('POST', 'usage', { requests, ...(options.key === undefined ? {} : { key: options.key }) }),
    setMeter: (meter, value, options = {}) =>
      call('POST', 'usage', { meter, value, ...(options.key === undefined ? {} : { key: options.key }) }),
  };
}

function nothing(): void {}

/** A stub that is already gone (used up, reset) needs no removing. */
function ignoreGone(err: unknown): void {
  if ((err as { status?: unknown }).status === 404) return;
  throw err;
}
