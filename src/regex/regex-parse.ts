/**
 * A small reader of JavaScript regular expressions, enough to judge how they backtrack
 * (regex-safety.ts): which characters each part can match (sets of them: regex-charset.ts), what
 * repeats what, where alternatives are. It reads patterns the engine has already accepted
 * (`new RegExp` did not throw), so it is lenient; where it cannot tell, it answers "any
 * character", which only makes the judge stricter.
 */
import { ANY, caseFolded, CLASS_ESCAPES, LINE_TERMINATORS, negate, union, type CharSet } from './regex-charset.js';

/** One part of a pattern. `from`/`to` are offsets in the pattern text (for messages). */
export type RegexNode =
  | { readonly kind: 'char'; readonly set: CharSet }
  /** `^`, `$`, `\b`, `\B`: match no character. `start` for `^`. */
  | { readonly kind: 'assert'; readonly start?: boolean }
  /** A lookahead or lookbehind: matches no character, but runs its own pattern. */
  | { readonly kind: 'look'; readonly body: RegexNode }
  /** `\1`, `\k<name>`: matches text of any length. */
  | { readonly kind: 'backref' }
  | { readonly kind: 'group'; readonly alternatives: readonly (readonly RegexNode[])[] }
  | {
      readonly kind: 'repeat';
      readonly min: number;
      readonly max: number;
      readonly body: RegexNode;
      readonly from: number;
      readonly to: number;
    };

/** Flags that change what a pattern matches: i, s, u, v. */
export interface RegexFlags {
  readonly ignoreCase: boolean;
  readonly dotAll: boolean;
  readonly unicode: boolean;
  readonly unicodeSets: boolean;
}

const CONTROL_ESCAPES: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13 };

/** Reads `pattern` (already accepted by `new RegExp(pattern, flags)`) into a tree. */
export function parseRegex(pattern: string, flags: RegexFlags): RegexNode {
  let at = 0;
  const peek = () => pattern[at];
  /** The offset just past the next `char`, or the end. */
  const past = (char: string): number => {
    const found = pattern.indexOf(char, at);
    return found === -1 ? pattern.length : found + 1;
  };

  /** One character, or a class escape (`\\d`), or nothing at all (a back reference): `code` is set for one character. */
  interface Item {
    readonly set: CharSet | undefined;
    readonly code?: number;
  }
  const one = (code: number): Item => ({ set: flags.ignoreCase ? caseFolded([[code, code]]) : [[code, code]], code });

  /** After a `\\`, outside or inside a class. */
  function escape(inClass: boolean): Item {
    const c = pattern[at++] ?? '';
    if (c in CLASS_ESCAPES) return { set: CLASS_ESCAPES[c] };
    if (c in CONTROL_ESCAPES) return one(CONTROL_ESCAPES[c] as number);
    if (c === 'p' || c === 'P') {
      if (peek() === '{') at = past('}');
      return { set: ANY };
    }
    if (c === 'b' && inClass) return one(8);
    if (c === 'x' && /^[0-9a-f]{2}$/i.test(pattern.slice(at, at + 2))) {
      at += 2;
      return one(parseInt(pattern.slice(at - 2, at), 16));
    }
    if (c === 'u') {
      const braced = /^\{([0-9a-f]+)\}/i.exec(pattern.slice(at));
      if (braced !== null && (flags.unicode || flags.unicodeSets)) {
        at += braced[0].length;
        return one(parseInt(braced[1] as string, 16));
      }
      if (/^[0-9a-f]{4}$/i.test(pattern.slice(at, at + 4))) {
        at += 4;
        return one(parseInt(pattern.slice(at - 4, at), 16));
      }
    }
    if (c === 'c' && /^[a-z]$/i.test(peek() ?? '')) return one(pattern.charCodeAt(at++) % 32);
    if (/[0-9]/.test(c)) {
      if (!inClass && c !== '0') {
        while (/[0-9]/.test(peek() ?? '')) at++;
        return { set: undefined }; // a back reference (an octal escape outside `u` mode is rare: judged as one too)
      }
      while (/[0-7]/.test(peek() ?? '')) at++;
      return { set: ANY };
    }
    if (c === 'k' && !inClass && peek() === '<') {
      at = past('>');
      return { set: undefined };
    }
    const code = c.codePointAt(0) ?? 0;
    if (code > 0xffff) at++;
    return one(code);
  }

  /** One member of a class: a character or an escape. */
  function classItem(): Item {
    if (peek() === '\\') {
      at++;
      return escape(true);
    }
    const code = pattern.codePointAt(at) ?? 0;
    at += code > 0xffff ? 2 : 1;
    return one(code);
  }

  function classSet(): CharSet {
    at++; // `[`
    const negated = peek() === '^';
    if (negated) at++;
    const parts: CharSet[] = [];
    let unknown = false;
    while (at < pattern.length && peek() !== ']') {
      if (
        flags.unicodeSets &&
        (peek() === '[' ||
          pattern.startsWith('&&', at) ||
          pattern.startsWith('--', at) ||
          pattern.startsWith('\\q', at))
      ) {
        // Set operations and nested classes of the `v` flag: not worked out, any character.
        unknown = true;
        let depth = 0;
        while (at < pattern.length && (depth > 0 || peek() !== ']')) {
          if (peek() === '\\') at++;
          else if (peek() === '[') depth++;
          else if (peek() === ']') depth--;
          at++;
        }
        break;
      }
      const item = classItem();
      if (item.code !== undefined && peek() === '-' && pattern[at + 1] !== ']' && at + 1 < pattern.length) {
        at++;
        const end = classItem();
        if (end.code === undefined) unknown = true;
        else
          parts.push(
            flags.ignoreCase
              ? caseFolded([[item.code, Math.max(item.code, end.code)]])
              : [[item.code, Math.max(item.code, end.code)]],
          );
      } else if (item.set === undefined) unknown = true;
      else parts.push(item.set);
    }
    at++; // `]`
    if (unknown) return ANY;
    const set = union(...parts);
    return negated ? negate(flags.ignoreCase ? caseFolded(set) : set) : set;
  }

  function atom(): RegexNode {
    const c = peek();
    if (c === '(') {
      at++;
      let look = false;
      if (peek() === '?') {
        const ahead = pattern.slice(at, at + 3);
        if (ahead.startsWith('?=') || ahead.startsWith('?!')) ((look = true), (at += 2));
        else if (ahead === '?<=' || ahead === '?<!') ((look = true), (at += 3));
        else if (ahead.startsWith('?<')) at = past('>');
        else at = past(':'); // `(?:`, and modifiers such as `(?i:`
      }
      const body = alternation();
      at++; // `)`
      return look ? { kind: 'look', body } : body;
    }
    if (c === '[') return { kind: 'char', set: classSet() };
    if (c === '.') {
      at++;
      return { kind: 'char', set: flags.dotAll ? ANY : negate(LINE_TERMINATORS) };
    }
    if (c === '^' || c === '$') {
      at++;
      return c === '^' ? { kind: 'assert', start: true } : { kind: 'assert' };
    }
    if (c === '\\') {
      at++;
      if (peek() === 'b' || peek() === 'B') {
        at++;
        return { kind: 'assert' };
      }
      const { set } = escape(false);
      return set === undefined ? { kind: 'backref' } : { kind: 'char', set };
    }
    const { set } = classItem(); // a plain character is read as in a class
    return { kind: 'char', set: set ?? ANY };
  }

  /** A quantifier at `at` (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, each maybe lazy), or undefined. */
  function quantifier(): { min: number; max: number } | undefined {
    const c = peek();
    let bounds: { min: number; max: number } | undefined;
    if (c === '*') bounds = { min: 0, max: Infinity };
    else if (c === '+') bounds = { min: 1, max: Infinity };
    else if (c === '?') bounds = { min: 0, max: 1 };
    if (bounds !== undefined) at++;
    else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(at));
      if (m === null) return undefined;
      at += m[0].length;
      const min = Number(m[1]);
      bounds = { min, max: m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]) };
    } else return undefined;
    if (peek() === '?') at++;
    return bounds;
  }

  function sequence(): RegexNode[] {
    const items: RegexNode[] = [];
    while (at < pattern.length && peek() !== '|' && peek() !== ')') {
      const from = at;
      if (peek() === '*' || peek() === '+' || peek() === '?') {
        at++; // a quantifier with nothing before it (not valid JavaScript): skipped, so reading goes on
        continue;
      }
      let node = atom();
      for (let q = quantifier(); q !== undefined; q = quantifier())
        node = { kind: 'repeat', ...q, body: node, from, to: at };
      items.push(node);
    }
    return items;
  }

  function alternation(): Extract<RegexNode, { kind: 'group' }> {
    const alternatives = [sequence()];
    while (peek() === '|') {
      at++;
      alternatives.push(sequence());
    }
    return { kind: 'group', alternatives };
  }

  const alternatives = [...alternation().alternatives];
  // A `)` without its `(` (not valid JavaScript either): what follows is read as more alternatives.
  while (at < pattern.length) {
    at++;
    alternatives.push(...alternation().alternatives);
  }
  return { kind: 'group', alternatives };
}
