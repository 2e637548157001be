/**
 * Sets of characters as regex-parse.ts reads them and regex-safety.ts compares them: sorted
 * ranges of code points, their union, intersection test, complement and ASCII case folding, and
 * the sets of `.`, `\d`, `\w` and `\s` (and their negations).
 */

/** A set of code points as sorted, disjoint, non-adjacent `[from, to]` ranges. */
export type CharSet = ReadonlyArray<readonly [number, number]>;

const MAX_CODE_POINT = 0x10ffff;
export const ANY: CharSet = [[0, MAX_CODE_POINT]];

function normalize(ranges: Array<[number, number]>): CharSet {
  ranges.sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [];
  for (const [from, to] of ranges) {
    const last = out[out.length - 1];
    if (last !== undefined && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else out.push([from, to]);
  }
  return out;
}

/** The code points in any of `sets`. */
export function union(...sets: CharSet[]): CharSet {
  return normalize(sets.flatMap((set) => set.map(([a, b]) => [a, b] as [number, number])));
}

/** Whether `a` and `b` share a code point. */
export function intersects(a: CharSet, b: CharSet): boolean {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const [a0, a1] = a[i] as readonly [number, number];
    const [b0, b1] = b[j] as readonly [number, number];
    if (a0 <= b1 && b0 <= a1) return true;
    if (a1 < b1) i++;
    else j++;
  }
  return false;
}

/** The code points not in `set`. */
export function negate(set: CharSet): CharSet {
  const out: Array<[number, number]> = [];
  let next = 0;
  for (const [from, to] of set) {
    if (from > next) out.push([next, from - 1]);
    next = to + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

/** Adds the other case of ASCII letters; anything beyond ASCII may fold into anything beyond ASCII. */
export function caseFolded(set: CharSet): CharSet {
  const extra: Array<[number, number]> = [];
  for (const [from, to] of set) {
    for (const [lo, hi, shift] of [
      [0x41, 0x5a, 32],
      [0x61, 0x7a, -32],
    ] as const) {
      const a = Math.max(from, lo);
      const b = Math.min(to, hi);
      if (a <= b) extra.push([a + shift, b + shift]);
    }
    if (to >= 0x80 || (from <= 0x6b && to >= 0x6b) || (from <= 0x73 && to >= 0x73)) extra.push([0x80, MAX_CODE_POINT]); // K/k (Kelvin sign), S/s (long s)
  }
  return union(set, extra);
}

const DIGIT: CharSet = [[0x30, 0x39]];
const WORD: CharSet = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
const SPACE: CharSet = union(
  [
    [0x09, 0x0d],
    [0x20, 0x20],
    [0xa0, 0xa0],
    [0x1680, 0x1680],
    [0x2000, 0x200a],
  ],
  [
    [0x2028, 0x2029],
    [0x202f, 0x202f],
    [0x205f, 0x205f],
    [0x3000, 0x3000],
    [0xfeff, 0xfeff],
  ],
);
export const LINE_TERMINATORS: CharSet = [
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
];
/** The sets of the class escapes `\d`, `\D`, `\w`, `\W`, `\s`, `\S`. */
export const CLASS_ESCAPES: Record<string, CharSet> = {
  d: DIGIT,
  D: negate(DIGIT),
  w: WORD,
  W: negate(WORD),
  s: SPACE,
  S: negate(SPACE),
};
