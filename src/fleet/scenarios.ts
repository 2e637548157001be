import type { AnswerState } from '../answer/answer-state.js';
import type { Logger } from '../logger.js';
import { pairsOf, type FleetConnection } from './connection.js';
import type { Bus } from './bus.js';
import type { Refill } from './generation.js';
import type { FleetKeys } from './keys.js';

export type SharedScenarios = AnswerState & {
  catchUp(): Promise<void>;
  /** The states this host holds, put back in a Redis that restarted without them (generation.ts). */
  held(): Refill[];
};

/**
 * Scenario states shared by a fleet: each host reads its own copy (no round trip on a request's
 * path); a move — by an answer's `setState`, the admin API or a reset — goes to Redis and to every
 * other host at once (not waited for on a request's path; the admin call waits, see journal-link.ts).
 * A host that starts, or comes back after Redis was away, takes the states Redis holds.
 */
export function shareScenarios(
  inner: AnswerState,
  conn: FleetConnection,
  keys: FleetKeys,
  bus: Bus,
  isRemote: () => boolean,
  logger: Logger,
): SharedScenarios {
  const tell = (name: string, state: string): void => {
    if (isRemote() || !conn.up) return;
    void conn.send(['HSET', keys.scenarios, name, state]).catch(() => {});
    bus.tell({ op: 'scenario-state', name, state });
  };
  async function catchUp(): Promise<void> {
    if (!conn.up) return;
    for (const [name, state] of pairsOf(await conn.send(['HGETALL', keys.scenarios]))) inner.setScenario(name, state);
  }
  bus.handle('scenario-state', (change) => void inner.setScenario(String(change.name), String(change.state)));
  bus.handle('scenarios-reset', () => inner.resetScenarios());
  conn.onUp(
    () =>
      void catchUp().catch((err: Error) =>
        logger.warn(`fleet: could not read the fleet's scenario states: ${err.message}`),
      ),
  );
  return {
    nextRequest: (key) => inner.nextRequest(key),
    position: (key, list) => inner.position(key, list),
    advance: (key, list) => inner.advance(key, list),
    nextPick: (key, list) => inner.nextPick(key, list),
    get states() {
      return inner.states;
    },
    scenarios: () => inner.scenarios(),
    setScenario(name, state) {
      const known = inner.setScenario(name, state);
      if (known) tell(name, state);
      return known;
    },
    resetSequences: () => inner.resetSequences(),
    resetScenarios() {
      inner.resetScenarios();
      if (isRemote() || !conn.up) return;
      void conn.send(['DEL', keys.scenarios]).catch(() => {});
      bus.tell({ op: 'scenarios-reset' });
    },
    adopt: (config) => inner.adopt(config),
    forget: (key) => inner.forget(key),
    catchUp,
    held: () =>
      Object.entries(inner.states).map(([name, state]) => ({
        op: 'hash',
        key: keys.scenarios,
        field: name,
        value: state,
      })),
  };
}
