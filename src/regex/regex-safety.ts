import { longestRepeatRun } from './regex-chains.js';
import { ANY, intersects, union, type CharSet } from './regex-charset.js';
import { parseRegex, type RegexFlags, type RegexNode } from './regex-parse.js';

/**
 * Why a `matches` pattern is refused: JavaScript's regex engine backtracks, and a repeated part
 * that can match the same text in many ways makes it try each way before it gives up — time that
 * doubles with every character of a request (`^(\d+,?)+$` took 1.5 s on 28 digits and an `x`).
 * Patterns come from the committed config; the text they test comes from any client, so such a
 * pattern is a config error. Three shapes are refused, wherever they sit in the pattern:
 *
 * - a part repeated more than once that holds an unbounded repeat (or, repeated without bound,
 *   any repeat of varying length) — `(a+)+`, `(\d+,?)+`, `(.*a){20}`, `(a{1,3})+` — unless the
 *   inner repeats are plain character repeats each ended by a character it cannot match, so that
 *   each round has one way to end: `([a-z0-9-]+\.)+`, `(,\s*\w+)*` are accepted;
 * - a repeated part holding alternatives that can begin with the same character: `(a|a)*`,
 *   `(a|aa)+`;
 * - three or more unbounded repeats in a row that can take the same characters, the search from
 *   every position counting as one unless the pattern starts with `^`: `.*a.*b`, `^\d+\d+\d+x`.
 *
 * A verdict as a value: undefined when the pattern is accepted, else the reason (a sentence end).
 */
export function backtrackingRisk(pattern: string, flags: string): string | undefined {
  const tree = parseRegex(pattern, readFlags(flags));
  let risk: string | undefined;
  visit(tree, (node) => {
    if (risk !== undefined || node.kind !== 'repeat' || node.max < 2) return;
    const shown = pattern.slice(node.from, node.to);
    if (hasOverlappingAlternatives(node.body)) {
      risk = `the repeated part \`${shown}\` has alternatives that can start with the same character (as in (a|aa)+); make them start differently`;
    } else if (hasNestedRepeat(node) && !eachRoundEndsOneWay(node.body)) {
      risk = `the repeated part \`${shown}\` holds another repeat that can match the same text (as in (a+)+); write it without a repeat inside a repeat, e.g. ^[\\d,]+$ rather than ^(\\d+,?)+$`;
    }
  });
  if (risk !== undefined) return risk;
  const run = longestRepeatRun(tree);
  if (run.length >= MAX_RUN) {
    const shown = pattern.slice(run.from, run.to);
    return `the repeat \`${shown}\` comes after other repeats that can take the same characters (as in .*a.*b, where the search from every position counts as one), so a failing test tries every way to share the text among them; anchor the pattern with ^, drop a leading .* (a pattern is looked for anywhere already), or put between the repeats characters they cannot match`;
  }
  return undefined;
}

/**
 * Longest run of unbounded repeats that can share characters (the search from every position
 * counting as one, see regex-chains.ts) a pattern may hold: two (`\d+x`, n² steps at worst,
 * milliseconds on the 2 KiB a test reads, see MATCH_INPUT_LIMIT) pass, three (`.*a.*b`, n³) do not.
 */
const MAX_RUN = 3;

function readFlags(flags: string): RegexFlags {
  return {
    ignoreCase: flags.includes('i'),
    dotAll: flags.includes('s'),
    unicode: flags.includes('u'),
    unicodeSets: flags.includes('v'),
  };
}

function children(node: RegexNode): readonly RegexNode[] {
  if (node.kind === 'group') return node.alternatives.flat();
  if (node.kind === 'repeat' || node.kind === 'look') return [node.body];
  return [];
}

function visit(node: RegexNode, see: (node: RegexNode) => void): void {
  see(node);
  for (const child of children(node)) visit(child, see);
}

function some(node: RegexNode, test: (node: RegexNode) => boolean): boolean {
  return test(node) || children(node).some((child) => some(child, test));
}

/** Whether `outer`'s body holds a repeat of varying length that makes the rounds ambiguous. */
function hasNestedRepeat(outer: Extract<RegexNode, { kind: 'repeat' }>): boolean {
  return some(outer.body, (node) => {
    if (node.kind === 'backref') return true; // text of any length
    if (node.kind !== 'repeat' || node.min === node.max) return false;
    return node.max === Infinity || outer.max === Infinity;
  });
}

/** What one round of a repeat reads, element by element, when it is that simple. */
type Element =
  | { readonly kind: 'fixed'; readonly set: CharSet }
  | { readonly kind: 'varying'; readonly set: CharSet; readonly min: number }
  | { readonly kind: 'zero' };

/**
 * Whether every varying character repeat in `body` is followed (going round: the next round starts
 * after the last element) by a character it cannot match, before any other repeat that could take
 * its characters: then each round has one way to end and the rounds cannot trade text.
 */
function eachRoundEndsOneWay(body: RegexNode): boolean {
  const elements = simpleElements(body);
  if (elements === undefined) return false;
  return elements.every((element, i) => {
    if (element.kind !== 'varying') return true;
    for (let step = 1; step <= elements.length; step++) {
      const next = elements[(i + step) % elements.length] as Element;
      if (step === elements.length) return false; // round again to itself: nothing ends it
      if (next.kind === 'zero') continue;
      if (intersects(next.set, element.set)) return false;
      if (next.kind === 'fixed' || next.min > 0) return true;
    }
    return false;
  });
}

/** The body as a sequence of characters, character repeats and assertions; undefined when it holds more (alternatives, groups of several parts). */
function simpleElements(body: RegexNode): Element[] | undefined {
  const items = unwrap(body);
  if (items === undefined) return undefined;
  const out: Element[] = [];
  for (const item of items) {
    if (item.kind === 'assert') out.push({ kind: 'zero' });
    else if (item.kind === 'char') out.push({ kind: 'fixed', set: item.set });
    else if (item.kind === 'repeat') {
      const inner = unwrap(item.body);
      const only = inner?.length === 1 ? inner[0] : undefined;
      if (only?.kind !== 'char') return undefined;
      if (item.min === item.max)
        for (let n = 0; n < Math.min(item.min, 2); n++) out.push({ kind: 'fixed', set: only.set });
      else out.push({ kind: 'varying', set: only.set, min: item.min });
    } else return undefined;
  }
  return out;
}

/** A node as a plain sequence: a group of one alternative is its items; a lone node is itself. */
function unwrap(node: RegexNode): readonly RegexNode[] | undefined {
  if (node.kind !== 'group') return [node];
  if (node.alternatives.length !== 1) return undefined;
  const [items] = node.alternatives as [readonly RegexNode[]];
  return items.length === 1 && items[0]?.kind === 'group' ? unwrap(items[0]) : items;
}

/** Whether some alternation inside `node` has two alternatives that can start with the same character. */
function hasOverlappingAlternatives(node: RegexNode): boolean {
  return some(node, (inner) => {
    if (inner.kind !== 'group' || inner.alternatives.length < 2) return false;
    const firsts = inner.alternatives.map((items) => firstOf(items).set);
    return firsts.some((a, i) => firsts.some((b, j) => j > i && intersects(a, b)));
  });
}

/** The characters a sequence can start with, and whether it can match no text. */
function firstOf(items: readonly RegexNode[]): { set: CharSet; empty: boolean } {
  let set: CharSet = [];
  for (const item of items) {
    const first = firstOfNode(item);
    set = union(set, first.set);
    if (!first.empty) return { set, empty: false };
  }
  return { set, empty: true };
}

function firstOfNode(node: RegexNode): { set: CharSet; empty: boolean } {
  switch (node.kind) {
    case 'char':
      return { set: node.set, empty: false };
    case 'assert':
    case 'look':
      return { set: [], empty: true };
    case 'backref':
      return { set: ANY, empty: true };
    case 'repeat': {
      const body = firstOfNode(node.body);
      return { set: body.set, empty: body.empty || node.min === 0 };
    }
    case 'group': {
      const parts = node.alternatives.map(firstOf);
      return { set: union(...parts.map((p) => p.set)), empty: parts.some((p) => p.empty) };
    }
  }
}
