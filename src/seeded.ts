import { drawFromLanes, streamLanes } from '../pipeline/failure.js';
import type { AnswerRandom } from './context.js';

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
  const lanes = text ? answerLanes(seed, `answer\u0000${endpointKey}\u0000by\u0000${by}`) : endpointLanes(seed, endpointKey);
  const n = text ? 0 : by;
  const word = (i: number): number => (drawFromLanes(lanes[i] as Lanes, n) * TWO_POW_32) >>> 0;
  const nextUint32 = sfc32(word(0), word(1), word(2));
  const fakerSeed = word(3);
  return { nextUint32, next: () => nextUint32() / TWO_POW_32, fakerSeed };
}

type Lanes = readonly [number, number];

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
  const unit = span <= TWO_POW_32 ? random.next() : (random.nextUint32() * 2 ** 21 + (random.nextUint32() >>> 11)) / 2 ** 53;
  return low + Math.floor(unit * span);
}
