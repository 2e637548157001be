/**
 * A list's filters compiled into a test of each stored object: a field's text equals the value
 * (any of a list), nested fields by brackets, ranges (`gt`, `gte`, `lt`, `lte`) compare numbers.
 */
import { numberOf, readOwn, textOf } from '../expression/values.js';
import type { StoredObject } from './store.js';

type Obj = Record<string, unknown>;

/** Whether a stored object passes the filters: each field's text equals the value (any of a list), ranges compare numbers. */
export function compileFilters(filters: Obj): ((object: StoredObject) => boolean) | undefined {
  const entries = Object.entries(filters);
  if (entries.length === 0) return undefined;
  const test = matcherOf(filters);
  return (object) => {
    let value: unknown;
    try {
      value = JSON.parse(object.text);
    } catch {
      return false;
    }
    return test(value);
  };
}

const RANGE: Readonly<Record<string, (a: number, b: number) => boolean>> = {
  gt: (a, b) => a > b,
  gte: (a, b) => a >= b,
  lt: (a, b) => a < b,
  lte: (a, b) => a <= b,
};

function matcherOf(spec: Obj): (value: unknown) => boolean {
  const tests = Object.entries(spec).map(([key, want]): ((value: unknown) => boolean) => {
    if (typeof want === 'string') return (v) => sameText(readOwn(v, key), want);
    if (Array.isArray(want)) return (v) => want.some((w) => typeof w === 'string' && sameText(readOwn(v, key), w));
    if (want !== null && typeof want === 'object') {
      const keys = Object.keys(want);
      if (keys.length > 0 && keys.every((k) => Object.hasOwn(RANGE, k))) {
        return (v) => {
          const n = numberOf(readOwn(v, key));
          return (
            n !== undefined &&
            keys.every((k) => {
              const bound = numberOf((want as Obj)[k]);
              return bound !== undefined && (RANGE[k] as (a: number, b: number) => boolean)(n, bound);
            })
          );
        };
      }
      const inner = matcherOf(want as Obj);
      return (v) => inner(readOwn(v, key));
    }
    return () => true;
  });
  return (value) => tests.every((test) => test(value));
}

function sameText(value: unknown, want: string): boolean {
  if (value === undefined) return false;
  return value === null ? want === 'null' : textOf(value) === want;
}
