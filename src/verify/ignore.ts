import { ANY_KEY, ITEMS, type Segment } from './json-path.js';
import { parseIgnore, type IgnoreStep as Step } from '../config/verify-ignore.js';

/** `verify.ignore` matched against the paths of a comparison (its grammar: config/verify-ignore.ts). */

/** A compiled ignore list. */
export interface IgnoreList {
  /** Whether the path (or one of its parents) is ignored. */
  covers(segments: readonly Segment[]): boolean;
}

function stepMatches(step: Step, segment: Segment): boolean {
  if ('items' in step) return segment === ITEMS;
  if (!('name' in step)) return false;
  if (segment === ITEMS) return step.any;
  if (segment === ANY_KEY) return step.any || step.name.test('*');
  return step.name.test(segment);
}

/** Whether `steps` match a prefix of `path` (starting at `p`), `..` standing for any number of segments. */
function matchesPrefix(steps: readonly Step[], s: number, path: readonly Segment[], p: number): boolean {
  if (s === steps.length) return true;
  const step = steps[s] as Step;
  if ('deep' in step) {
    for (let q = p; q <= path.length; q++) if (matchesPrefix(steps, s + 1, path, q)) return true;
    return false;
  }
  if (p === path.length) return false;
  return stepMatches(step, path[p] as Segment) && matchesPrefix(steps, s + 1, path, p + 1);
}

/** Compiles ignore entries (already checked by the config rules; a bad one is left out). */
export function compileIgnore(entries: readonly string[]): IgnoreList {
  const patterns = entries.map(parseIgnore).filter((p): p is Step[] => typeof p !== 'string');
  if (patterns.length === 0) return { covers: () => false };
  return { covers: (segments) => patterns.some((steps) => matchesPrefix(steps, 0, segments, 0)) };
}
