import { randomInt } from 'node:crypto';
import { drawFromLanes, streamLanes } from '../seeded.js';

/**
 * Decides which requests get the simulated 500. Lives outside the config, so its
 * per-endpoint counters survive reloads.
 */
export interface FailureSource {
  /** The seed in use — the one given, or the random one chosen at creation (for "seeded with N"). */
  readonly seed: number;
  /**
   * Counts one request to `endpointKey` (e.g. `"GET /users/:id"`) and says whether it fails.
   * `failRate` 0 never fails and 1 always fails; every call advances the endpoint's counter, so
   * changing a failRate on reload does not shift which later requests fail.
   */
  shouldFail(endpointKey: string, failRate: number): boolean;
}

interface EndpointStream {
  /** The key's two 32-bit lanes (seed and endpoint key hashed together). */
  lanes: readonly [number, number];
  /** Requests counted so far; the next request is number `count` (0-based). */
  count: number;
}

/**
 * Creates a counter-based failure source: whether the n-th request to an endpoint fails is a pure
 * function of (seed, endpoint key, n), so one endpoint's failures never shift when other endpoints
 * get more or fewer calls, and the same seed replays the same failures in any process.
 * Without a seed, a random one is chosen (read it back from `seed`).
 */
export function createFailureSource(seed?: number): FailureSource {
  const chosen = seed ?? randomInt(0, 2 ** 32);
  streamLanes(chosen, ''); // a seed that is not a finite number is refused now, not at the first request
  const streams = new Map<string, EndpointStream>();

  return {
    seed: chosen,
    shouldFail(endpointKey, failRate) {
      let stream = streams.get(endpointKey);
      if (stream === undefined) {
        stream = { lanes: streamLanes(chosen, endpointKey), count: 0 };
        streams.set(endpointKey, stream);
      }
      const n = stream.count++;
      if (!(failRate > 0)) return false;
      if (failRate >= 1) return true;
      return drawFromLanes(stream.lanes, n) < failRate;
    },
  };
}

/**
 * The uniform number in [0, 1) that decides request `n` (0-based) to `endpointKey` under `seed`:
 * it fails iff the number is below the endpoint's failRate. Exposed for tests and diagnostics.
 */
export function failureDraw(seed: number, endpointKey: string, n: number): number {
  return drawFromLanes(streamLanes(seed, endpointKey), n);
}
