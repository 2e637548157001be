import { load, Schema, Type } from 'js-yaml';
import { declinedSyntax } from './fast-read-scan.js';

/**
 * The quick way to turn config text into data: js-yaml, about 12× faster than the `yaml` package
 * (a 10,000-endpoint file: 80 ms against 1 s), but it knows no positions. It is only ever the
 * first try. Whenever it answers, its data must be exactly what `yaml` would give, so it declines
 * (returns undefined) for everything where the two could differ or where `yaml`'s reading adds
 * something, and the caller then reads the file with `yaml`:
 *
 * - anything js-yaml rejects (syntax, duplicate keys, several documents, unknown tags, depth > 100);
 * - anchors, tags, directives, merge keys (`<<`) and complex keys (`? …`, `[a]: …`), found by a
 *   conservative scan of the text (a false alarm only costs speed);
 * - a mapping key that YAML would read as something else than its text (`0123:`, `~:`), which
 *   the positioned reader reports as an issue.
 *
 * Plain scalars are resolved with YAML 1.2's core schema exactly as `yaml` writes it (the same
 * regular expressions in the same order), not with js-yaml's own core types, which also accept
 * `0b101` and `1_000`. `test/unit/config-fast-read.test.ts` holds the two readers to the same data.
 */

/** A `-` ending its line: an empty sequence item, or one whose content is on the lines below. */
const LONE_DASH = /(?:^|[ \t])-[ \t]*(?:#[^\n]*)?$/gm;
const DASH_LINE = /^([ \t]*)-[ \t]*(?:#.*)?$/;
const CONTENT_LINE = /^(?:[ \t]*(?:#[^\n]*)?\r?\n)*([ \t]*)\S/;

/**
 * Whether `text` has an empty sequence item: js-yaml then puts the next, less indented item into
 * that sequence (`-\n  -\n- y` gives [[null, y]], yaml [[null], y]). A `-` alone on its line with
 * something more indented below is the start of a multi-line item, which both read alike.
 */
function hasEmptyItem(text: string): boolean {
  for (const match of text.matchAll(LONE_DASH)) {
    const end = match.index + match[0].length;
    const line = DASH_LINE.exec(text.slice(text.lastIndexOf('\n', match.index) + 1, end).replace(/\r$/, ''));
    if (line === null) return true; // `- -`, `key: -`
    const next = CONTENT_LINE.exec(text.slice(end + 1, end + 1 + 4096));
    if (next === null || (next[1] as string).length <= (line[1] as string).length) return true;
  }
  return false;
}

/**
 * Whether the first line with content is indented. yaml requires a root collection at the
 * indentation of what follows it (`  - a\n- b` is an error); js-yaml accepts it.
 */
export function rootIndented(text: string): boolean {
  const lines = /^(?:\ufeff)?(?:(?:[ \t]*(?:#[^\n]*)?|---[ \t]*)\r?\n)*([ \t]?)/.exec(text);
  return lines !== null && lines[1] !== '';
}

/** One scalar resolution of the core schema: when `test` matches a plain scalar, `value` gives its value. */
interface CoreScalar {
  name: string;
  test: RegExp;
  value: (source: string) => unknown;
}

// In `yaml`'s order (its schema/core/schema.js): null, bool, octal, decimal and hex ints, then floats.
const CORE_SCALARS: CoreScalar[] = [
  { name: 'null', test: /^(?:~|[Nn]ull|NULL)?$/, value: () => null },
  { name: 'bool', test: /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/, value: (s) => s[0] === 't' || s[0] === 'T' },
  { name: 'int-oct', test: /^0o[0-7]+$/, value: (s) => parseInt(s.substring(2), 8) },
  { name: 'int', test: /^[-+]?[0-9]+$/, value: (s) => parseInt(s, 10) },
  { name: 'int-hex', test: /^0x[0-9a-fA-F]+$/, value: (s) => parseInt(s.substring(2), 16) },
  {
    name: 'float-nan',
    test: /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
    value: (s) =>
      s.slice(-3).toLowerCase() === 'nan' ? NaN : s[0] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY,
  },
  { name: 'float-exp', test: /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/, value: (s) => parseFloat(s) },
  { name: 'float', test: /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/, value: (s) => parseFloat(s) },
];

/**
 * The text of every plain scalar read as something that prints differently (`0123` → "123",
 * `True` → "true", `~` → "null"), during one read. A mapping key with such a text may have been
 * written as that scalar; the positioned reader then decides. Module state is safe: a read is
 * synchronous from start to end.
 */
let reshaped = new Set<string>();

const schema = new Schema({
  implicit: CORE_SCALARS.map(
    ({ name, test, value }) =>
      // Tags of our own: an explicit `!!int` finds no type and makes js-yaml decline.
      new Type(`tag:mockapi,core:${name}`, {
        kind: 'scalar',
        resolve: (source: unknown) => typeof source === 'string' && test.test(source),
        construct: (source: string) => {
          const result = value(source);
          if (String(result) !== source) reshaped.add(String(result));
          return result;
        },
      }),
  ),
});

interface ReaderState {
  position: number;
  kind: string | null;
  /** How many nodes are open, this one included (js-yaml's own count). */
  depth: number;
}

/** The first character at or after `at` that is neither white space nor in a comment. */
function nextVisible(text: string, at: number): string {
  let i = at;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '#') i = text.indexOf('\n', i) === -1 ? text.length : text.indexOf('\n', i);
    else if (' \t\r\n'.includes(c)) i++;
    else return c;
  }
  return '';
}

/**
 * Whether a collection starting at `start` is a key of a flow mapping (`{[a]}`, `{x, {b: 1}}`):
 * yaml keys it by its text (`[ a ]`), js-yaml by `String()` of its value (`a`). `parentStart` is
 * where the enclosing node started. Says yes when a comment makes it hard to tell.
 */
function isFlowKey(text: string, start: number, parentStart: number | undefined): boolean {
  if (parentStart === undefined || nextVisible(text, parentStart) !== '{') return false;
  let i = start - 1;
  while (i >= 0 && ' \t\r\n'.includes(text[i] as string)) {
    if (text[i] === '\n' && text.lastIndexOf('#', i) > text.lastIndexOf('\n', i - 1)) return true;
    i--;
  }
  return text[i] === '{' || text[i] === ',';
}

/** Where each `#` that follows white space is: every comment starts at one. */
function commentStarts(text: string): number[] {
  const starts: number[] = [];
  for (let i = text.indexOf('#'); i !== -1; i = text.indexOf('#', i + 1)) {
    if (i > 0 && ' \t\r\n'.includes(text[i - 1] as string)) starts.push(i);
  }
  return starts;
}

/** Whether some number in `sorted` is in [start, end). */
function anyBetween(sorted: readonly number[], start: number, end: number): boolean {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((sorted[mid] as number) < start) low = mid + 1;
    else high = mid;
  }
  return low < sorted.length && (sorted[low] as number) < end;
}

/**
 * Follows js-yaml's nodes as they are read, for what a text scan cannot see reliably: a node
 * directly followed by `#` (yaml wants white space before a comment and reports an error; js-yaml
 * reads a comment), comments in flow collections and a flow collection used as a key.
 */
function nodeWatcher(
  text: string,
  spanDepth: number,
  spans: number[],
): { listener: (event: string, state: ReaderState) => void; declined: () => boolean } {
  const starts: number[] = [];
  const comments = commentStarts(text);
  let declined = false;
  return {
    listener(event, state) {
      if (event === 'open') {
        starts.push(state.position);
        return;
      }
      const start = starts.pop() as number;
      const at = state.position;
      if (state.depth === spanDepth) spans.push(start, at);
      if (text.charCodeAt(at) === 0x23 /* # */ && !' \t\r\n'.includes(text[at - 1] as string)) declined = true;
      else if (state.kind === 'mapping' || state.kind === 'sequence') {
        // a flow collection with a comment inside: yaml wants it indented like the content and
        // reports an error otherwise; js-yaml skips it (a ` #` in a string counts too: declining is safe)
        if (
          isFlowKey(text, start, starts[starts.length - 1]) ||
          (anyBetween(comments, start, at) && '{['.includes(nextVisible(text, start)))
        )
          declined = true;
      }
    },
    declined: () => declined,
  };
}

/** Whether some mapping key in `data` (at any depth) is one of `texts`. */
export function hasKeyAmong(data: unknown, texts: ReadonlySet<string>): boolean {
  const stack: unknown[] = [data];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
      continue;
    }
    for (const key of Object.keys(value)) {
      if (texts.has(key)) return true;
      stack.push((value as Record<string, unknown>)[key]);
    }
  }
  return false;
}

/** What one js-yaml read of a piece of config text gave, with the texts it read as other values. */
export interface FastPiece {
  data: unknown;
  /** Texts of plain scalars read as something that prints differently (see `reshaped` above); always has `null`. */
  reshaped: ReadonlySet<string>;
  /** Where each node at the depth asked for starts and ends, in the order they end: [start, end, start, end, …]. */
  spans: readonly number[];
}

/**
 * `text` read by js-yaml under every check of the fast reader but two that look at the whole
 * document (its first line's indentation and its keys against what was reshaped), or undefined
 * when it declines. `maxDepth`: js-yaml's nesting limit for this piece; `spanDepth`: the depth
 * (1 for the root) of the nodes whose spans are wanted, 0 for none.
 */
export function readFastPiece(text: string, maxDepth = 100, spanDepth = 0): FastPiece | undefined {
  if (declinedSyntax(text) || hasEmptyItem(text)) return undefined;
  reshaped = new Set(['null']); // an empty key reads as null without passing through a type
  let warned = false;
  const spans: number[] = [];
  const nodes = nodeWatcher(text, spanDepth, spans);
  let data: unknown;
  try {
    // maxDepth: a js-yaml option its type declarations leave out (default 100).
    const options = { schema, maxDepth, listener: nodes.listener as never, onWarning: () => (warned = true) };
    data = load(text, options);
  } catch {
    return undefined;
  }
  if (warned || nodes.declined()) return undefined;
  return { data, reshaped, spans };
}

/**
 * The data of `text` as `yaml` (core schema, unique keys, merge keys) would read it, or undefined
 * when the fast reader declines: then the text must be read with positions.
 */
export function readYamlFast(text: string, spanDepth = 0): FastPiece | undefined {
  if (rootIndented(text)) return undefined;
  const piece = readFastPiece(text, 100, spanDepth);
  if (piece === undefined || hasKeyAmong(piece.data, piece.reshaped)) return undefined;
  return piece.data === undefined ? { ...piece, data: null } : piece; // an empty document: yaml says null
}
