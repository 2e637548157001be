import type { Config } from '../config/types.js';

/**
 * The runtime state of dynamic answers, kept outside the compiled config so that a reload
 * (which swaps the compiled config) does not lose it: per endpoint, how many requests reached it
 * and where each `sequence` and `pick` list stands; and the state of every scenario.
 *
 * Endpoints are identified by their key (`GET /users/:id`), lists by their position in the
 * endpoint (`responses[1].sequence`). A reload keeps the entries of endpoints that still exist and
 * the states of scenarios that are still declared; the control plane (`POST /__mockapi/reset`,
 * `GET/PUT /__mockapi/scenarios`) calls {@link AnswerState.resetSequences},
 * {@link AnswerState.resetScenarios}, {@link AnswerState.scenarios} and {@link AnswerState.setScenario}.
 */
export interface AnswerState {
  /** Counts one request that reached the endpoint and returns its number, from 1 (`request` in expressions and `when`). */
  nextRequest(endpointKey: string): number;
  /** Requests a sequence list has answered so far (0 before the first). */
  position(endpointKey: string, listId: string): number;
  /** Moves a sequence one request on (called only when the request was answered, not simulated to fail). */
  advance(endpointKey: string, listId: string): void;
  /** Counts one pick at a pick list and returns its number, from 0 (the n of a seeded pick). */
  nextPick(endpointKey: string, listId: string): number;
  /** Current state of every declared scenario. The live object: read it, never change it. */
  readonly states: Readonly<Record<string, string>>;
  /** A copy of every scenario's state: `{ "<name>": "<state>" }`. */
  scenarios(): Record<string, string>;
  /** Moves a declared scenario to `state`; false (and nothing changes) when no scenario has that name. */
  setScenario(name: string, state: string): boolean;
  /** Zeroes request counters, sequence positions and pick counts of every endpoint. */
  resetSequences(): void;
  /** Puts every scenario back to its `initial` state. */
  resetScenarios(): void;
  /**
   * Follows a newly served config: drops the counters of endpoints it no longer has and the
   * scenarios it no longer declares, adds new scenarios at their initial state, keeps the rest.
   */
  adopt(config: Pick<Config, 'endpoints' | 'scenarios'>): void;
  /** Drops the counters of one endpoint (a run-time stub that was removed). */
  forget(endpointKey: string): void;
}

/** How the keys of run-time stubs (src/stubs) begin: they are not the config's, so a reload keeps their counters. */
export const STUB_KEY_PREFIX = 'stub ';

interface EndpointState {
  requests: number;
  /** Sequence positions and pick counts by list id (a list is one or the other). */
  lists: Map<string, number>;
}

/** Creates the store for the config first served. */
export function createAnswerState(config: Pick<Config, 'endpoints' | 'scenarios'>): AnswerState {
  const endpoints = new Map<string, EndpointState>();
  let initial: Record<string, string> = Object.create(null) as Record<string, string>;
  // Null prototype: a scenario may be called anything the schema allows, `constructor` included.
  let states: Record<string, string> = Object.create(null) as Record<string, string>;

  const entry = (key: string): EndpointState => {
    let found = endpoints.get(key);
    if (found === undefined) {
      found = { requests: 0, lists: new Map() };
      endpoints.set(key, found);
    }
    return found;
  };

  const store: AnswerState = {
    nextRequest: (key) => ++entry(key).requests,
    position: (key, list) => endpoints.get(key)?.lists.get(list) ?? 0,
    advance(key, list) {
      const lists = entry(key).lists;
      lists.set(list, (lists.get(list) ?? 0) + 1);
    },
    nextPick(key, list) {
      const lists = entry(key).lists;
      const n = lists.get(list) ?? 0;
      lists.set(list, n + 1);
      return n;
    },
    get states() {
      return states;
    },
    scenarios: () => ({ ...states }),
    setScenario(name, state) {
      if (!Object.hasOwn(initial, name)) return false;
      states[name] = state;
      return true;
    },
    resetSequences: () => endpoints.clear(),
    forget: (key) => void endpoints.delete(key),
    resetScenarios() {
      for (const name of Object.keys(initial)) states[name] = initial[name] as string;
    },
    adopt(next) {
      // (no counters yet: nothing to drop, and no set of every endpoint's key to make for a big config)
      const keys = endpoints.size === 0 ? undefined : new Set(next.endpoints.map((e) => `${e.method} ${e.path}`));
      for (const key of endpoints.keys())
        if (!keys?.has(key) && !key.startsWith(STUB_KEY_PREFIX)) endpoints.delete(key);
      const kept = Object.create(null) as Record<string, string>;
      initial = Object.create(null) as Record<string, string>;
      for (const [name, { initial: start }] of Object.entries(next.scenarios)) {
        initial[name] = start;
        kept[name] = Object.hasOwn(states, name) ? (states[name] as string) : start;
      }
      states = kept;
    },
  };
  store.adopt(config);
  return store;
}
