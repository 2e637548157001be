import { randomInt } from 'node:crypto';

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
  /** Two 32-bit lanes derived from the seed and the endpoint key. */
  lane1: number;
  lane2: number;
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
  const [seedLo, seedHi] = splitSeed(chosen);
  const streams = new Map<string, EndpointStream>();

  return {
    seed: chosen,
    shouldFail(endpointKey, failRate) {
      let stream = streams.get(endpointKey);
      if (stream === undefined) {
        const [lane1, lane2] = hashKey(endpointKey, seedLo, seedHi);
        stream = { lane1, lane2, count: 0 };
        streams.set(endpointKey, stream);
      }
      const n = stream.count++;
      if (!(failRate > 0)) return false;
      if (failRate >= 1) return true;
      return draw(stream.lane1, stream.lane2, n) < failRate;
    },
  };
}

/**
 * The uniform number in [0, 1) that decides request `n` (0-based) to `endpointKey` under `seed`:
 * it fails iff the number is below the endpoint's failRate. Exposed for tests and diagnostics.
 */
export function failureDraw(seed: number, endpointKey: string, n: number): number {
  const [lane1, lane2] = streamLanes(seed, endpointKey);
  return draw(lane1, lane2, n);
}

/** The two lanes {@link failureDraw} hashes from (seed, key): kept, they make each later draw of the key a few multiplications. */
export function streamLanes(seed: number, key: string): readonly [number, number] {
  const [seedLo, seedHi] = splitSeed(seed);
  return hashKey(key, seedLo, seedHi);
}

/** `failureDraw(seed, key, n)` from the key's {@link streamLanes}. */
export function drawFromLanes(lanes: readonly [number, number], n: number): number {
  return draw(lanes[0], lanes[1], n);
}

/** Independent seeded streams of uniform numbers, one per key, each counting its own draws. */
export interface DrawStreams {
  /** The next number in [0, 1) of `key`'s stream: a pure function of (seed, key, how many came before). */
  next(key: string): number;
}

/**
 * The counter-based generator of {@link createFailureSource} for other decisions (faults, latency
 * shapes): a stream keyed by e.g. `fault GET /users/:id` never shares draws with the fail rate's
 * `GET /users/:id`, so adding faults does not move which requests fail.
 */
export function createDrawStreams(seed: number): DrawStreams {
  const [seedLo, seedHi] = splitSeed(seed);
  const streams = new Map<string, EndpointStream>();
  return {
    next(key) {
      let stream = streams.get(key);
      if (stream === undefined) {
        const [lane1, lane2] = hashKey(key, seedLo, seedHi);
        stream = { lane1, lane2, count: 0 };
        streams.set(key, stream);
      }
      return draw(stream.lane1, stream.lane2, stream.count++);
    },
  };
}

const TWO_POW_32 = 4294967296;

/** Low and high 32 bits of the seed's integer part (two's complement for negative seeds). */
function splitSeed(seed: number): [number, number] {
  if (!Number.isFinite(seed)) throw new RangeError(`failure seed must be a finite number, got ${seed}`);
  const whole = Math.trunc(seed);
  return [whole >>> 0, Math.floor(whole / TWO_POW_32) >>> 0];
}

/** cyrb53-style two-lane string hash, keyed by the seed; computed once per endpoint key. */
function hashKey(key: string, seedLo: number, seedHi: number): [number, number] {
  let h1 = 0xdeadbeef ^ seedLo;
  let h2 = 0x41c6ce57 ^ fmix32(seedHi ^ 0x9e3779b9);
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return [fmix32(h1), fmix32(h2)];
}

/**
 * splitmix32 step at counter n (a Weyl sequence through the murmur3 finalizer), then a second
 * finalizer round keyed by the other lane and the counter's high bits so that streams of different
 * keys are unrelated and counters past 2^32 do not wrap around.
 */
function draw(lane1: number, lane2: number, n: number): number {
  const nLo = n >>> 0;
  const nHi = Math.floor(n / TWO_POW_32) >>> 0;
  const a = fmix32((lane1 + Math.imul(nLo, 0x9e3779b9)) | 0);
  const b = fmix32(a ^ lane2 ^ Math.imul(nHi + 1, 0x27d4eb2f));
  return b / TWO_POW_32;
}

/** murmur3's 32-bit finalizer: a bijection with full avalanche. Returns an unsigned 32-bit value. */
function fmix32(value: number): number {
  let h = value | 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
