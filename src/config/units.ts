/**
 * Units of the config file: durations, sizes and fail rates. Each parser takes whatever the YAML
 * held and returns the value in base units, or `undefined` when it is not a valid value — it never
 * throws. Callers turn `undefined` into a config issue.
 *
 * Decimals are allowed in strings when the result is whole: `1.5s` is 1500 ms and `1.5kb` is 1536
 * bytes, but `1.5ms` and `0.3kb` are refused (durations are whole milliseconds, sizes whole bytes).
 * Decimal arithmetic is exact: `1.1s` is 1100 ms, not 1100.0000000000002.
 */

/** Longest duration: Node timers cannot wait longer than 2^31 − 1 ms (about 24.8 days). */
export const MAX_DURATION_MS = 2_147_483_647;
/** Largest size: the largest integer a JavaScript number holds exactly. */
export const MAX_SIZE_BYTES = Number.MAX_SAFE_INTEGER;

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
/** Sizes are binary: 1kb = 1024 bytes. Unit names are case-insensitive. */
const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** `<digits>[.<digits>]<unit>`; units are matched by the caller. Same grammar as the JSON Schema patterns. */
const DURATION_RE = /^([0-9]+)(?:\.([0-9]+))?(ms|s|m|h)$/;
const SIZE_RE = /^([0-9]+)(?:\.([0-9]+))?(b|kb|mb|gb)$/i;
const PERCENT_RE = /^([0-9]+(?:\.[0-9]+)?)%$/;
/** Longer strings cannot hold a valid value; refusing them early keeps parsing cheap. */
const MAX_UNIT_STRING_LENGTH = 64;

/**
 * `whole.fraction × factor` computed exactly, or `undefined` when it is not a whole number or
 * exceeds `max`.
 */
function scaleExactly(whole: string, fraction: string, factor: number, max: number): number | undefined {
  const digits = fraction.replace(/0+$/, '');
  const mantissa = Number(whole + digits); // the number × 10^digits.length, an integer
  const scaled = mantissa * factor;
  if (!Number.isSafeInteger(scaled)) return undefined; // too large, or too many digits to be exact
  const divisor = 10 ** digits.length;
  if (scaled % divisor !== 0) return undefined;
  const value = scaled / divisor;
  return value <= max ? value : undefined;
}

function parseWithUnit(v: unknown, re: RegExp, units: Record<string, number>, max: number): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 && v <= max ? v : undefined;
  if (typeof v !== 'string' || v.length > MAX_UNIT_STRING_LENGTH) return undefined;
  const m = re.exec(v);
  if (m === null) return undefined;
  const factor = units[(m[3] as string).toLowerCase()];
  if (factor === undefined) return undefined;
  return scaleExactly(m[1] as string, m[2] ?? '', factor, max);
}

/**
 * A duration in milliseconds: a non-negative integer (milliseconds) or a string with a unit,
 * `250ms`, `2s`, `1m`, `1h` (lower case, no space). At most {@link MAX_DURATION_MS}.
 */
export function parseDuration(v: unknown): number | undefined {
  return parseWithUnit(v, DURATION_RE, DURATION_UNITS, MAX_DURATION_MS);
}

/**
 * A size in bytes: a non-negative integer (bytes) or a string with a unit, `512b`, `512kb`, `2mb`,
 * `1gb` (1kb = 1024 bytes; any case, no space). At most {@link MAX_SIZE_BYTES}.
 */
export function parseSize(v: unknown): number | undefined {
  return parseWithUnit(v, SIZE_RE, SIZE_UNITS, MAX_SIZE_BYTES);
}

/** A probability from 0 to 1: a number (`0.25`) or a percentage string (`"25%"`, `"12.5%"`). */
export function parseFailRate(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 && v <= 1 ? v : undefined;
  if (typeof v !== 'string' || v.length > MAX_UNIT_STRING_LENGTH) return undefined;
  const m = PERCENT_RE.exec(v);
  if (m === null) return undefined;
  const percent = Number(m[1]);
  return percent <= 100 ? percent / 100 : undefined;
}

/** Why a duration string with a valid shape was refused, for messages. */
export function durationProblem(v: string): string {
  const m = DURATION_RE.exec(v);
  if (m !== null && Number(`${m[1]}.${m[2] ?? 0}`) * (DURATION_UNITS[m[3] as string] ?? 1) > MAX_DURATION_MS) {
    return `must be at most ${MAX_DURATION_MS}ms (about 24.8 days, the longest a timer can wait)`;
  }
  return 'must be a whole number of milliseconds';
}

/** Why a size string with a valid shape was refused, for messages. */
export function sizeProblem(v: string): string {
  const m = SIZE_RE.exec(v);
  if (
    m !== null &&
    Number(`${m[1]}.${m[2] ?? 0}`) * (SIZE_UNITS[(m[3] as string).toLowerCase()] ?? 1) > MAX_SIZE_BYTES
  ) {
    return `must be at most ${MAX_SIZE_BYTES} bytes`;
  }
  return 'must be a whole number of bytes';
}

/** A latency shape: uniform between `min` and `max`, or log-normal with a median and a 99th percentile. */
export type DelayShape =
  { kind: 'uniform'; minMs: number; maxMs: number } | { kind: 'lognormal'; medianMs: number; p99Ms: number };

/** A checked `{ median, p99 }` or `{ min, max }` (an endpoint's `delay`, a webhook send's `after`) as its shape. */
export function delayShape(raw: Readonly<Record<string, unknown>>): DelayShape {
  if (raw.median !== undefined)
    return {
      kind: 'lognormal',
      medianMs: parseDuration(raw.median) as number,
      p99Ms: parseDuration(raw.p99) as number,
    };
  return { kind: 'uniform', minMs: parseDuration(raw.min) as number, maxMs: parseDuration(raw.max) as number };
}
