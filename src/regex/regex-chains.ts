import { ANY, intersects, union, type CharSet } from './regex-charset.js';
import type { RegexNode } from './regex-parse.js';

/** An unbounded repeat reached along the pattern, and how many such repeats before it could take the same characters. */
interface Chain {
  readonly set: CharSet;
  readonly length: number;
}

/** The longest run found, and the repeat that ends it (offsets in the pattern). */
export interface LongestRun {
  readonly length: number;
  readonly from: number;
  readonly to: number;
}

/** Open chains kept at once; more come only from many alternatives, and the longest are the ones that matter. */
const MAX_OPEN = 16;

/**
 * The most unbounded repeats that follow one another along the pattern while each could take the
 * characters of the one before (nothing between them that the earlier one cannot match), counting
 * the search itself as one unless the pattern starts with `^`: `.*a.*b` has three (the search,
 * `.*`, `.*`). When such a run is followed by something that must still match, a failing test
 * tries every way to share the text among them: on the order of n^length steps for n characters.
 * A run at the very end (nothing left that could fail, `$` being something that can) costs nothing
 * and is not counted.
 */
export function longestRepeatRun(tree: RegexNode): LongestRun {
  let best: LongestRun = { length: 0, from: 0, to: 0 };
  const anchored =
    tree.kind === 'group' && tree.alternatives.every((items) => items[0]?.kind === 'assert' && items[0].start === true);

  function step(node: RegexNode, open: readonly Chain[], restEmpty: boolean): readonly Chain[] {
    switch (node.kind) {
      case 'char':
        return open.filter((chain) => intersects(chain.set, node.set));
      case 'assert':
      case 'look':
        return open;
      case 'backref':
        return [...open, { set: ANY, length: 1 }];
      case 'group':
        return prune(node.alternatives.flatMap((items) => sequence(items, open, restEmpty)));
      case 'repeat': {
        if (node.max !== Infinity) {
          const once = step(node.body, open, restEmpty);
          return node.min === 0 ? prune([...open, ...once]) : once;
        }
        const set = charsOf(node.body);
        const length =
          1 + Math.max(0, ...open.filter((chain) => intersects(chain.set, set)).map((chain) => chain.length));
        if (!restEmpty && length > best.length) best = { length, from: node.from, to: node.to };
        const kept = node.min === 0 ? open : open.filter((chain) => intersects(chain.set, set));
        return prune([...kept, { set, length }]);
      }
    }
  }

  function sequence(items: readonly RegexNode[], open: readonly Chain[], restEmpty: boolean): readonly Chain[] {
    let chains = open;
    items.forEach((item, i) => {
      chains = step(item, chains, restEmpty && items.slice(i + 1).every(cannotFail));
    });
    return chains;
  }

  step(tree, anchored ? [] : [{ set: ANY, length: 1 }], true);
  return best;
}

function prune(chains: readonly Chain[]): readonly Chain[] {
  return chains.length <= MAX_OPEN ? chains : [...chains].sort((a, b) => b.length - a.length).slice(0, MAX_OPEN);
}

/** Every character a node can match. */
function charsOf(node: RegexNode): CharSet {
  switch (node.kind) {
    case 'char':
      return node.set;
    case 'assert':
    case 'look':
      return [];
    case 'backref':
      return ANY;
    case 'repeat':
      return charsOf(node.body);
    case 'group':
      return union(...node.alternatives.flat().map(charsOf));
  }
}

/** Whether a node always matches, if only with no text (`x*`): after a run, such a rest cannot make the test fail. */
function cannotFail(node: RegexNode): boolean {
  switch (node.kind) {
    case 'repeat':
      return node.min === 0 || cannotFail(node.body);
    case 'group':
      return node.alternatives.some((items) => items.every(cannotFail));
    default:
      return false; // a character, and also `$`, `\b`, a lookaround or a back reference, can fail
  }
}
