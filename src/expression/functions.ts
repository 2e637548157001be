import type { RequestContext } from './context.js';
import { randomIntBetween, randomUuid } from '../seeded.js';
import { isNothing, numberOf, readOwn, textOf } from './values.js';

/** One built-in function: how many arguments it takes, and what it does with their values. */
export interface BuiltinFunction {
  readonly minArgs: number;
  readonly maxArgs: number;
  /** Never throws: a value it cannot use gives nothing (undefined). */
  readonly run: (args: readonly unknown[], ctx: RequestContext) => unknown;
  /** Whether its result depends on the random source (so the answer is not the same for every request). */
  readonly random?: boolean;
}

const OFFSET_UNITS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};
const OFFSET_RE = /^([+-]?)(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/;

/**
 * A `date()` offset in milliseconds: a number of milliseconds (`-5000`), or text with a sign and a
 * unit, `-1d`, `+2h`, `30m`, `90s`, `500ms`, `1w` (d = 24 h, no calendar months). Undefined otherwise.
 */
export function parseOffset(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || value.length > 32) return undefined;
  const m = OFFSET_RE.exec(value.trim());
  if (m === null) return undefined;
  const ms = Number(m[2]) * (OFFSET_UNITS[m[3] as string] as number);
  return m[1] === '-' ? -ms : ms;
}

function isoOrNothing(ms: number): string | undefined {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function textFunction(change: (text: string) => string): BuiltinFunction {
  return { minArgs: 1, maxArgs: 1, run: ([v]) => (isNothing(v) ? undefined : change(textOf(v))) };
}

/** The characters of `randomId` and of resources' default ids. */
export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const HEX = '0123456789abcdef';

/** `randomId(n)`, `randomHex(n)`: `n` characters of `digits` (1 to 64) from the seeded source; another `n` gives nothing. */
function randomTextFunction(digits: string): BuiltinFunction {
  return {
    minArgs: 1,
    maxArgs: 1,
    random: true,
    run: ([n], ctx) => {
      const length = numberOf(n);
      return length === undefined || !Number.isInteger(length) || length < 1 || length > 64
        ? undefined
        : randomDigits(ctx.random, length, digits);
    },
  };
}

/** The fixed set of functions an expression may call, by name. */
export const BUILTINS: Readonly<Record<string, BuiltinFunction>> = {
  /** Whole number: `int("42")` → 42, `int("4.7")` → 4, `int("x")` → nothing. */
  int: {
    minArgs: 1,
    maxArgs: 1,
    run: ([v]) => {
      const n = numberOf(v);
      return n === undefined ? undefined : Math.trunc(n);
    },
  },
  /** Number: `number("4.5")` → 4.5. */
  number: { minArgs: 1, maxArgs: 1, run: ([v]) => numberOf(v) },
  /** Text: `string(7)` → "7"; lists and objects as JSON; nothing stays nothing. */
  string: { minArgs: 1, maxArgs: 1, run: ([v]) => (isNothing(v) ? undefined : textOf(v)) },
  upper: textFunction((text) => text.toUpperCase()),
  lower: textFunction((text) => text.toLowerCase()),
  /** JSON text of any value: `json(body)`. */
  json: { minArgs: 1, maxArgs: 1, run: ([v]) => (v === undefined ? undefined : JSON.stringify(v)) },
  /** Length of text or a list, number of keys of an object. */
  len: {
    minArgs: 1,
    maxArgs: 1,
    run: ([v]) => {
      if (typeof v === 'string' || Array.isArray(v)) return v.length;
      if (v !== null && typeof v === 'object') return Object.keys(v).length;
      return undefined;
    },
  },
  /** The first argument unless it is nothing, null or empty text; then the second. */
  default: { minArgs: 2, maxArgs: 2, run: ([v, fallback]) => (isNothing(v) || v === '' ? fallback : v) },
  uuid: { minArgs: 0, maxArgs: 0, random: true, run: (_args, ctx) => randomUuid(ctx.random) },
  /** A whole number from min to max, both included. */
  randomInt: {
    minArgs: 2,
    maxArgs: 2,
    random: true,
    run: ([min, max], ctx) => {
      const low = numberOf(min);
      const high = numberOf(max);
      return low === undefined || high === undefined ? undefined : randomIntBetween(ctx.random, low, high);
    },
  },
  /** `n` letters and digits (base62, 1 to 64) from the seeded source: `cus_${randomId(14)}`. */
  randomId: randomTextFunction(BASE62),
  /** `n` lower-case hexadecimal digits (1 to 64) from the seeded source: `req_${randomHex(32)}`. */
  randomHex: randomTextFunction(HEX),
  /** The first item of a list whose field (a path, `a.b`) has the value (compared as text): `find(resources.customers, 'email', body.email)`. */
  find: {
    minArgs: 3,
    maxArgs: 3,
    run: ([list, field, value]) => {
      if (!Array.isArray(list) || typeof field !== 'string' || isNothing(value)) return undefined;
      const path = field.split('.');
      const wanted = textOf(value);
      return list.find((item) => {
        let found: unknown = item;
        for (const step of path) found = readOwn(found, step);
        return !isNothing(found) && textOf(found) === wanted;
      });
    },
  },
  /** ISO time of the server's clock moved by an offset: `date('-1d')`; `date()` is `now`. */
  date: {
    minArgs: 0,
    maxArgs: 1,
    run: (args, ctx) => {
      const offset = args.length === 0 ? 0 : parseOffset(args[0]);
      return offset === undefined ? undefined : isoOrNothing(ctx.now + offset);
    },
  },
};

/** `length` base62 characters drawn from `random` (each from one 32-bit draw: the bias is below 2^-26). */
export function randomBase62(random: RequestContext['random'], length: number): string {
  return randomDigits(random, length, BASE62);
}

/**
 * `length` characters of `digits` drawn from `random`, each from one 32-bit draw. Made as one flat
 * string (the character codes, then one `fromCharCode`): appended one by one, a 14-character id was
 * 14 rope nodes, garbage at once and a rope kept in every object a collection holds.
 */
function randomDigits(random: RequestContext['random'], length: number, digits: string): string {
  const codes = new Array<number>(length);
  for (let i = 0; i < length; i++) codes[i] = digits.charCodeAt(random.nextUint32() % digits.length);
  return String.fromCharCode(...codes);
}

/** The ISO text of `now` (the `now` root). */
export function nowIso(ctx: RequestContext): string | undefined {
  return isoOrNothing(ctx.now);
}
