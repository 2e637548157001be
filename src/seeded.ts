// Seeded randomness, the kernel every reproducible draw shares: the fail rate (pipeline/failure.ts),
// faults and latency shapes (pipeline/resilience.ts), answers' random values, streams' waits and
// webhooks' retries. Each is a pure function of (seed, key, counter). Imports nothing.

/** A seeded stream of random numbers for one answer. */
export interface AnswerRandom {
  /** The next uniform number in [0, 1), with 32 bits of resolution. */
  next(): number;
  /** The next unsigned 32-bit integer (the same draw as `next()`, unscaled). */
  nextUint32(): number;
  /** A 32-bit seed for faker, fixed for this source and independent of how many draws were made. */
  readonly fakerSeed: number;
}

const TWO_POW_32 = 4294967296;

/**
 * The random source of one answer. With the same `seed`, every value it yields depends only on the
 * endpoint and `by`: the request's number n (the same n as the fail rate counts), or the
 * text of the endpoint's `seedBy` value. A number and its text (`7`, `"7"`) seed alike, and a `seedBy`
 * value never collides with a request number.
 *
 * The starting state is hashed the way the fail rate is (`failureDraw`: a keyed cyrb53 hash of the
 * endpoint key, then splitmix32 at counter n), on keys of their own so answers and failures are
 * unrelated; the stream itself is sfc32, which is fast, small and passes PractRand to 2^40 bytes.
 */
export function createAnswerRandom(seed: number, endpointKey: string, by: number | string): AnswerRandom {
  const text = typeof by === 'string';
  const lanes = text
    ? answerLanes(seed, `answer\u0000${endpointKey}\u0000by\u0000${by}`)
    : endpointLanes(seed, endpointKey);
  const n = text ? 0 : by;
  const word = (i: number): number => (drawFromLanes(lanes[i] as Lanes, n) * TWO_POW_32) >>> 0;
  const nextUint32 = sfc32(word(0), word(1), word(2));
  const fakerSeed = word(3);
  return { nextUint32, next: () => nextUint32() / TWO_POW_32, fakerSeed };
}

/**
 * The first `out.length` numbers of `createAnswerRandom(seed, endpointKey, n).nextUint32()` for a
 * request number `n`, written into `out`: the same draws, without making the answer source's other
 * closures and words (a resource's default id takes 14 on every create).
 */
export function firstAnswerDraws(seed: number, endpointKey: string, n: number, out: Uint32Array): void {
  const lanes = endpointLanes(seed, endpointKey);
  const next = sfc32(laneWord(lanes, 0, n), laneWord(lanes, 1, n), laneWord(lanes, 2, n));
  for (let i = 0; i < out.length; i++) out[i] = next();
}

type Lanes = readonly [number, number];

/** Word `i` of an answer's source at counter `n` (as createAnswerRandom's `word`). */
const laneWord = (lanes: readonly Lanes[], i: number, n: number): number =>
  (drawFromLanes(lanes[i] as Lanes, n) * TWO_POW_32) >>> 0;

/** The lanes of the four words of an answer's source (sfc32's a, b, c and faker's seed) for `key`. */
function answerLanes(seed: number, key: string): readonly Lanes[] {
  return ['a', 'b', 'c', 'faker'].map((lane) => streamLanes(seed, `${lane}\u0000${key}`));
}

/**
 * An endpoint's lanes, hashed once: a request by number then costs four draws instead of four
 * string hashes (~1 µs). Kept per endpoint for the last seed it was asked with; cleared when it holds more keys than any
 * config is likely to have, so endpoints renamed by reloads cannot make it grow without bound.
 */
const cachedLanes = new Map<string, { readonly seed: number; readonly lanes: readonly Lanes[] }>();
const CACHED_LANES_MAX = 20_000;

function endpointLanes(seed: number, endpointKey: string): readonly Lanes[] {
  const cached = cachedLanes.get(endpointKey);
  if (cached !== undefined && cached.seed === seed) return cached.lanes;
  if (cachedLanes.size >= CACHED_LANES_MAX) cachedLanes.clear();
  const lanes = answerLanes(seed, `answer\u0000${endpointKey}`);
  cachedLanes.set(endpointKey, { seed, lanes });
  return lanes;
}

/**
 * sfc32 from three seed words: the next unsigned 32-bit integer per call. Fast, small, passes
 * PractRand to 2^40 bytes; warmed up by 12 rounds, after which its output no longer shows the seed.
 */
export function sfc32(seedA: number, seedB: number, seedC: number): () => number {
  let a = seedA | 0;
  let b = seedB | 0;
  let c = seedC | 0;
  let d = 1;
  const next = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 12; i++) next();
  return next;
}

/** A version-4 UUID (RFC 9562) made of 122 bits of `random`: reproducible under a seed, unlike crypto.randomUUID. */
export function randomUuid(random: AnswerRandom): string {
  const hex = (n: number): string => n.toString(16).padStart(8, '0');
  const w0 = hex(random.nextUint32());
  const w1 = hex(((random.nextUint32() & 0xffff0fff) | 0x00004000) >>> 0);
  const w2 = hex(((random.nextUint32() & 0x3fffffff) | 0x80000000) >>> 0);
  const w3 = hex(random.nextUint32());
  return `${w0}-${w1.slice(0, 4)}-${w1.slice(4)}-${w2.slice(0, 4)}-${w2.slice(4)}${w3}`;
}

/** A whole number from `min` to `max`, both included, or undefined when they are not safe integers. */
export function randomIntBetween(random: AnswerRandom, min: number, max: number): number | undefined {
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max)) return undefined;
  const low = Math.min(min, max);
  const span = Math.abs(max - min) + 1;
  // Two draws give 53 bits, enough for any safe span without visible bias below 2^32.
  const unit =
    span <= TWO_POW_32 ? random.next() : (random.nextUint32() * 2 ** 21 + (random.nextUint32() >>> 11)) / 2 ** 53;
  return low + Math.floor(unit * span);
}

/** The two lanes a key's draws hash from under `seed` (pipeline/failure.ts's `failureDraw`): kept, they make each later draw of the key a few multiplications. */
export function streamLanes(seed: number, key: string): readonly [number, number] {
  const [seedLo, seedHi] = splitSeed(seed);
  return hashKey(key, seedLo, seedHi);
}

/** The n-th (0-based) uniform number in [0, 1) of the key whose {@link streamLanes} these are. */
export function drawFromLanes(lanes: readonly [number, number], n: number): number {
  return draw(lanes[0], lanes[1], n);
}

/** Independent seeded streams of uniform numbers, one per key, each counting its own draws. */
export interface DrawStreams {
  /** The next number in [0, 1) of `key`'s stream: a pure function of (seed, key, how many came before). */
  next(key: string): number;
}

/**
 * The counter-based generator of the fail rate (pipeline/failure.ts) for other decisions (faults, latency
 * shapes): a stream keyed by e.g. `fault GET /users/:id` never shares draws with the fail rate's
 * `GET /users/:id`, so adding faults does not move which requests fail.
 */
export function createDrawStreams(seed: number): DrawStreams {
  const [seedLo, seedHi] = splitSeed(seed);
  const streams = new Map<string, { lane1: number; lane2: number; count: number }>();
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
