/** The randexp class as this module uses it (its own types describe the same shape). */
export interface RandExpClass {
  new (pattern: string): { max: number; randInt: (a: number, b: number) => number; gen(): string };
}

/** A string for a schema `pattern`, within the length bounds; undefined when none could be made. */
export type PatternString = (pattern: string, minLength?: number, maxLength?: number) => string | undefined;

/** How many times an unbounded repeat (`*`, `+`, `{2,}`) repeats at most beyond its minimum. */
const MAX_REPEAT = 8;
/** Patterns longer than this are not generated from (the sampler's value stays). */
const MAX_PATTERN_LENGTH = 1000;
const ATTEMPTS = 8;

/** A small seeded generator (mulberry32): the same pattern gives the same string on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/**
 * Makes strings that match a schema `pattern` (an ECMAScript regular expression, unanchored as
 * JSON Schema reads it) with randexp: repeats bounded, randomness seeded by the pattern, so the
 * result is the same on every run. Each candidate is checked against the pattern and the lengths;
 * a pattern randexp cannot honour (lookarounds, back-references, `\p{…}`) gives undefined.
 */
export function createPatternString(RandExp: RandExpClass): PatternString {
  const cache = new Map<string, string | undefined>();
  return (pattern, minLength = 0, maxLength = Number.POSITIVE_INFINITY) => {
    const key = `${minLength}:${maxLength}:${pattern}`;
    if (cache.has(key)) return cache.get(key);
    let found: string | undefined;
    if (pattern.length <= MAX_PATTERN_LENGTH) {
      let regex: RegExp | undefined;
      try {
        regex = new RegExp(pattern, 'u');
      } catch {
        regex = undefined;
      }
      const random = seeded(hash(pattern));
      for (let attempt = 0; regex !== undefined && attempt < ATTEMPTS && found === undefined; attempt++) {
        try {
          const generator = new RandExp(pattern);
          generator.max = MAX_REPEAT;
          generator.randInt = (a, b) => a + Math.floor(random() * (b - a + 1));
          const text = generator.gen();
          const length = [...text].length;
          if (regex.test(text) && length >= minLength && length <= maxLength) found = text;
        } catch {
          break; // randexp cannot read this pattern
        }
      }
    }
    cache.set(key, found);
    return found;
  };
}
