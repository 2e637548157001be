import type { ControlPlane, EndpointInfo, ResetParts, ResetResult, UsageReport } from './control-plane.js';
import type { JournalEntry } from './journal-entry.js';
import type { RequestFilter } from './journal.js';
import type { WaitOptions } from './wait.js';
import { ControlError } from './control-error.js';
import {
  clockSetValue,
  filterOf,
  jsonBody,
  moveClock,
  readResetParts,
  readRotateKey,
  readScenarioName,
  readScenarioState,
  waitOf,
} from './call-input.js';
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
 * reads and the writes cover every host, as the admin API does. Each call's filter, options and
 * parts are read as the admin API reads what `connectMockServer` sends (src/control/call-input.ts):
 * the same 400 for a wrong one. When `stopping` aborts (the server stops), a wait still pending
 * rejects with the 503 `stopping` a wait over HTTP gets.
 */
export function controlCalls(plane: ControlPlane, fleet?: OtherWorkers, stopping?: AbortSignal): ControlCalls {
  // A call may answer at once (in process) or after a round trip (a shared store): both settle alike.
  const settle = <T>(work: () => T | Promise<T>): Promise<T> => {
    try {
      return Promise.resolve(work());
    } catch (err) {
      return Promise.reject(err as Error);
    }
  };
  const stopped = (err: unknown): never => {
    if (err instanceof ControlError && err.code === 'aborted')
      throw new ControlError(503, 'stopping', 'the server is stopping');
    throw err;
  };
  const wait = (
    filter: RequestFilter | undefined,
    options: WaitOptions | undefined,
    waitFor: (filter: RequestFilter, options: WaitOptions, signal?: AbortSignal) => Promise<JournalEntry[]>,
  ): Promise<JournalEntry[]> => settle(() => waitFor(...waitOf(filter, options), stopping)).catch(stopped);
  const rotate = (key: string | undefined, name: string | undefined) => {
    const body = readRotateKey(jsonBody({ key, name }));
    return plane.rotateKey(body.key, body.name);
  };
  const calls: ControlCalls = {
    requests: (filter) => settle(() => plane.requests(filterOf(filter))),
    countRequests: (filter) => settle(() => plane.countRequests(filterOf(filter))),
    waitForRequests: (filter, options) => wait(filter, options, (f, o, signal) => plane.waitForRequests(f, o, signal)),
    clearRequests: () => settle(() => plane.clearRequests()),
    usage: () => settle(() => plane.usage()),
    reset: (parts) => settle(() => plane.reset(readResetParts(jsonBody(parts)))),
    rotateKey: async (key, options = {}) => (await rotate(key, options.name)).key,
    scenarios: {
      get: () => settle(() => plane.scenarios()),
      set: (name, state) =>
        settle(() => plane.setScenario(readScenarioName(name), readScenarioState(jsonBody({ state })))),
    },
    clock: {
      now: async () => (await plane.clock.now()).now,
      set: async (time) => (await moveClock(plane, jsonBody({ set: clockSetValue(time) }))).now,
      advance: async (by) => (await moveClock(plane, jsonBody({ advance: by }))).now,
    },
    endpoints: () => settle(() => plane.endpoints()),
  };
  if (fleet === undefined) return calls;
  return {
    ...calls,
    requests: (filter) => settle(() => fleet.requests(filterOf(filter))),
    countRequests: (filter) => settle(() => fleet.count(filterOf(filter))),
    waitForRequests: (filter, options) => wait(filter, options, (f, o, signal) => fleet.waitFor(f, o, signal)),
    clearRequests: async () => {
      plane.clearRequests();
      await fleet.others({ op: 'clear' });
    },
    reset: async (given) => {
      const parts = readResetParts(jsonBody(given));
      const result = await plane.reset(parts);
      await fleet.others({ op: 'reset', parts });
      return result;
    },
    scenarios: {
      get: calls.scenarios.get,
      set: async (given, givenState) => {
        const name = readScenarioName(given);
        const state = readScenarioState(jsonBody({ state: givenState }));
        const result = plane.setScenario(name, state);
        await fleet.others({ op: 'scenario', name, state });
        return result;
      },
    },
    endpoints: async () => plane.endpoints(await fleet.endpointCounts()),
  };
}
