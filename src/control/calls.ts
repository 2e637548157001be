import type { ControlPlane, EndpointInfo, ResetParts, ResetResult, UsageReport } from './control-plane.js';
import type { JournalEntry } from './journal-entry.js';
import type { RequestFilter } from './journal.js';
import type { WaitOptions } from './wait.js';
import type { OtherWorkers } from './other-workers.js';

/**
 * The control calls (journal, usage, reset, key, scenarios, clock), as a test uses them: on the object of `startMockServer` (in
 * process) and on `connectMockServer(url)` (over HTTP), with the same answers. Each resolves to
 * what the admin API answers, a single-field answer unwrapped (`{"count": 3}` → `3`). Refusals
 * reject with a `ControlError` carrying the admin API's status and code; a wait that runs out
 * rejects with a `WaitTimeoutError` holding the requests that did match.
 */
export interface ControlCalls {
  /** `GET /__mockapi/requests`: the last `limit` matching entries with `id > since`, oldest first. */
  requests(filter?: RequestFilter): Promise<JournalEntry[]>;
  /** `GET /__mockapi/requests/count`. */
  countRequests(filter?: RequestFilter): Promise<number>;
  /** `GET /__mockapi/requests/wait`: resolves the moment `count` (default 1) matching requests exist. */
  waitForRequests(filter?: RequestFilter, options?: WaitOptions): Promise<JournalEntry[]>;
  /** `DELETE /__mockapi/requests`. */
  clearRequests(): Promise<void>;
  /** `GET /__mockapi/usage`. */
  usage(): Promise<UsageReport>;
  /** `POST /__mockapi/reset`: zeroes the parts not set to false. */
  reset(parts?: ResetParts): Promise<ResetResult>;
  /**
   * `POST /__mockapi/rotate-key`: resolves with the new key once this server serves it. `name`
   * rotates that key of `keys:` instead of `apiKey` (the key named `default`).
   */
  rotateKey(key?: string, options?: { name?: string }): Promise<string>;
  /** `GET /__mockapi/scenarios`, `PUT /__mockapi/scenarios/<name>`. */
  readonly scenarios: {
    get(): Promise<Record<string, string>>;
    set(name: string, state: string): Promise<Record<string, string>>;
  };
  /** `GET`/`POST /__mockapi/clock` (ISO times); reject with 409 without a virtual clock. */
  readonly clock: {
    now(): Promise<string>;
    set(time: string | number | Date): Promise<string>;
    advance(by: string | number): Promise<string>;
  };
  /** `GET /__mockapi/endpoints`. */
  endpoints(): Promise<EndpointInfo[]>;
}

/**
 * The calls over an in-process control plane. On a host of a fleet, `fleet` makes the journal's
 * reads and the writes cover every host, as the admin API does.
 */
export function controlCalls(plane: ControlPlane, fleet?: OtherWorkers): ControlCalls {
  // A call may answer at once (in process) or after a round trip (a shared store): both settle alike.
  const settle = <T>(work: () => T | Promise<T>): Promise<T> => {
    try {
      return Promise.resolve(work());
    } catch (err) {
      return Promise.reject(err as Error);
    }
  };
  const calls: ControlCalls = {
    requests: (filter) => settle(() => plane.requests(filter)),
    countRequests: (filter) => settle(() => plane.countRequests(filter)),
    waitForRequests: (filter, options) => plane.waitForRequests(filter, options),
    clearRequests: () => settle(() => plane.clearRequests()),
    usage: () => settle(() => plane.usage()),
    reset: (parts) => settle(() => plane.reset(parts)),
    rotateKey: async (key, options = {}) => (await plane.rotateKey(key, options.name)).key,
    scenarios: {
      get: () => settle(() => plane.scenarios()),
      set: (name, state) => settle(() => plane.setScenario(name, state)),
    },
    clock: {
      now: async () => (await plane.clock.now()).now,
      set: async (time) => (await plane.clock.set(time)).now,
      advance: async (by) => (await plane.clock.advance(by)).now,
    },
    endpoints: () => settle(() => plane.endpoints()),
  };
  if (fleet === undefined) return calls;
  return {
    ...calls,
    requests: (filter = {}) => fleet.requests(filter),
    countRequests: (filter = {}) => fleet.count(filter),
    waitForRequests: (filter = {}, options = {}) => fleet.waitFor(filter, options),
    clearRequests: async () => {
      plane.clearRequests();
      await fleet.others({ op: 'clear' });
    },
    reset: async (parts = {}) => {
      const result = await plane.reset(parts);
      await fleet.others({ op: 'reset', parts });
      return result;
    },
    scenarios: {
      get: calls.scenarios.get,
      set: async (name, state) => {
        const result = plane.setScenario(name, state);
        await fleet.others({ op: 'scenario', name, state });
        return result;
      },
    },
    endpoints: async () => plane.endpoints(await fleet.endpointCounts()),
  };
}
