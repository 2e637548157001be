import { hasKeyAmong, readFastPiece, rootIndented, type FastPiece } from './fast-read.js';

/*
 * A hot reload of a big config reads again only the endpoints whose text changed. The fast
 * reader's data for an item of the top-level `endpoints:` list depends on that item's lines alone
 * (the list's indentation aside), so the data read before is taken over for every item whose lines
 * are the same, and only the rest of the file (the head) and the new items are read: for 10,000
 * endpoints and a changed `project:` line, a few lines instead of 50,000.
 *
 * This is done only for a layout where the items cannot be mistaken:
 * - a line `endpoints:` at column 0 (a comment may follow), then blank or comment lines;
 * - then the items, each starting with `- ` at the column of the first one (s), every other line of
 *   the list blank, a comment, or indented more than s;
 * - the list ends at the first line at column 0 that is not a comment (not `-`), or at the end.
 * The head is read with one probe item in place of the list: when that probe is not exactly what
 * `endpoints` holds, the lines were not the list they look like (e.g. inside a quoted scalar), and
 * the whole text is read as before. Each new item is read on its own (js-yaml's nesting limit one
 * less, for the two levels above it) and must give one item. Every check of the fast reader holds
 * line by line, so it holds on the pieces; the one across the pieces (a key read as something else,
 * `~` as null) is made across them below. test/unit/config-fast-read-reuse.test.ts holds this reading
 * to the reading of the whole text.
 */

/** One item of the endpoints list, as read before. */
interface ReadItem {
  value: unknown;
  /** The texts the read it came from turned into other values (shared by the items of one read). */
  reshaped: ReadonlySet<string>;
  /** Its keys, at any depth, that a value prints as (`null`, `true`, `12`): only those can clash with `reshaped`. */
  suspectKeys: readonly string[];
}

/** What a read leaves for the next read of the same file: the text, where its items are, and their data. */
export interface ReadMemo {
  readonly text: string;
  /** Where each item's lines start, then where the list ends. */
  readonly bounds: readonly number[];
  readonly items: readonly ReadItem[];
}

/** The head with the probe in place of the list, and where the list's items are. */
interface Layout {
  head: string;
  /** Where each item's lines start in the text, then where the list ends. */
  bounds: number[];
  /** The column of the items' `-`. */
  indent: number;
}

/** A plain scalar that stands for the list in the head; a text holding it is read whole. */
const PROBE = 'mockapi-endpoints-probe-8c1f';
const ENDPOINTS_LINE = /^endpoints:[ \t]*(?:[ \t]#[^\n]*)?\r?$/m;
/** A carriage return that does not end a line with `\n`: js-yaml breaks the line there, the scan below would not. */
const LONE_CR = /\r(?!\n)/;
/** What `String()` of a null, boolean or number can be: the only keys a reshaped text can be. */
const PRINTED_VALUE = /^(?:null|true|false|NaN|-?Infinity|-?[0-9]+(?:\.[0-9]+)?(?:e[-+][0-9]+)?)$/;
const NO_KEYS: readonly string[] = [];
const SPACE = 0x20;
const DASH = 0x2d;
const HASH = 0x23;
const LF = 0x0a;
const CR = 0x0d;
const TAB = 0x09;

/** Where the line after the one at `at` starts (the text's length after the last line). */
function nextLine(text: string, at: number): number {
  const nl = text.indexOf('\n', at);
  return nl === -1 ? text.length : nl + 1;
}

/** What a line is, from the first character after its leading spaces (NaN at the end of the text). */
const isLineEnd = (c: number): boolean => c === LF || c === CR || Number.isNaN(c);

/** Where the items of `endpoints:` are in `text`, or undefined when its layout is not the plain one above. */
function splitEndpoints(text: string): Layout | undefined {
  const found = ENDPOINTS_LINE.exec(text);
  if (found === null || text.includes(PROBE) || LONE_CR.test(text)) return undefined;
  let at = nextLine(text, found.index);
  let indent = -1;
  const bounds: number[] = [];
  while (at < text.length) {
    let spaces = 0;
    while (text.charCodeAt(at + spaces) === SPACE) spaces++;
    const c = text.charCodeAt(at + spaces);
    if (c === TAB) return undefined; // the fast reader declines tabs in indentation anyway
    if (indent === -1 && c !== HASH && !isLineEnd(c)) indent = spaces; // the first item's line
    if (spaces === indent && c === DASH) {
      const after = text.charCodeAt(at + spaces + 1);
      if (after !== SPACE && after !== TAB && !isLineEnd(after)) return undefined;
      bounds.push(at);
    } else if (c !== HASH && !isLineEnd(c) && spaces <= indent) {
      if (spaces > 0 || c === DASH || bounds.length === 0) return undefined;
      break; // column 0: the list has ended
    }
    at = nextLine(text, at);
  }
  if (bounds.length === 0) return undefined;
  const listStart = bounds[0] as number;
  bounds.push(at);
  return { head: `${text.slice(0, listStart)}${' '.repeat(indent)}- ${PROBE}\n${text.slice(at)}`, bounds, indent };
}

/** The head read, when the probe is exactly the list: then the items are those of `endpoints:`. */
function readHead(layout: Layout): FastPiece | undefined {
  if (rootIndented(layout.head)) return undefined;
  const head = readFastPiece(layout.head);
  if (head === undefined || head.data === null || typeof head.data !== 'object' || Array.isArray(head.data))
    return undefined;
  const list = Object.prototype.hasOwnProperty.call(head.data, 'endpoints')
    ? (head.data as Record<string, unknown>).endpoints
    : undefined;
  return Array.isArray(list) && list.length === 1 && list[0] === PROBE ? head : undefined;
}

/** The keys of `value`, at any depth, that could be a reshaped text. */
function suspectKeys(value: unknown): readonly string[] {
  let found: string[] | undefined;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
      continue;
    }
    for (const key in v) {
      if (PRINTED_VALUE.test(key)) (found ??= []).push(key);
      stack.push((v as Record<string, unknown>)[key]);
    }
  }
  return found ?? NO_KEYS;
}

/** Whether a key of some item was, somewhere in the text, a plain scalar read as another value. */
function keyReshaped(head: FastPiece, items: Iterable<ReadItem>): boolean {
  const reshaped = new Set(head.reshaped);
  const sets = new Set<ReadonlySet<string>>();
  const suspects: string[] = [];
  for (const item of items) {
    if (!sets.has(item.reshaped)) {
      sets.add(item.reshaped);
      for (const text of item.reshaped) reshaped.add(text);
    }
    for (const key of item.suspectKeys) suspects.push(key);
  }
  return suspects.some((key) => reshaped.has(key)) || hasKeyAmong(head.data, reshaped);
}

/** How many characters `a` and `b` have in common at their start (`fromEnd`: at their end), at most `max`. */
function common(a: string, b: string, max: number, fromEnd: boolean): number {
  const at = (s: string, n: number, size: number): string =>
    fromEnd ? s.slice(s.length - n - size, s.length - n) : s.slice(n, n + size);
  let n = 0;
  // blocks first (compared natively), then character by character within the first block that differs
  for (let size = 4096; size >= 1; size >>= 4) while (n + size <= max && at(a, n, size) === at(b, n, size)) n += size;
  return n;
}

/**
 * The items of `memo` whose lines are the same at the same place, by index in `bounds` (undefined
 * where not): those before the first changed character, and those after the last (shifted by the
 * length the text gained or lost).
 */
function unchangedItems(text: string, bounds: readonly number[], memo: ReadMemo): (ReadItem | undefined)[] {
  const before = memo.bounds;
  const max = Math.min(text.length, memo.text.length);
  const prefix = common(text, memo.text, max, false);
  const suffixStart = text.length - common(text, memo.text, max - prefix, true);
  const shift = text.length - memo.text.length;
  const count = bounds.length - 1;
  const offset = count - (before.length - 1); // item i here is item i - offset there, in the suffix
  const found: (ReadItem | undefined)[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const from = bounds[i] as number;
    const to = bounds[i + 1] as number;
    if (to <= prefix && before[i] === from && before[i + 1] === to) found[i] = memo.items[i];
    else if (
      from >= suffixStart &&
      i - offset >= 0 &&
      (before[i - offset] as number) + shift === from &&
      (before[i - offset + 1] as number) + shift === to
    )
      found[i] = memo.items[i - offset];
  }
  return found;
}

/**
 * `text` read as the fast reader reads it, taking each endpoints item whose lines are in `memo`
 * from there; undefined when its layout does not allow this or the fast reader declines (read the
 * whole text then). The memo returned is for the next read of the file.
 */
export function readYamlReusing(text: string, memo: ReadMemo): { data: unknown; memo: ReadMemo } | undefined {
  const layout = splitEndpoints(text);
  const head = layout === undefined ? undefined : readHead(layout);
  if (layout === undefined || head === undefined) return undefined;
  const { bounds } = layout;
  const items = unchangedItems(text, bounds, memo);
  // The items that moved, by their lines: each taken once (a repeated item is read again, never shared).
  let moved: Map<string, ReadItem> | undefined;
  for (let i = 0; i < items.length; i++) {
    if (items[i] !== undefined) continue;
    moved ??= movedItems(memo, new Set(items));
    const lines = text.slice(bounds[i], bounds[i + 1]);
    let item = moved.get(lines);
    moved.delete(lines);
    if (item === undefined) {
      // two levels fewer above it than in the file (the root mapping, the list): one less of js-yaml's depth
      const piece = readFastPiece(lines, 99);
      if (piece === undefined || !Array.isArray(piece.data) || piece.data.length !== 1) return undefined;
      item = { value: piece.data[0], reshaped: piece.reshaped, suspectKeys: suspectKeys(piece.data[0]) };
    }
    items[i] = item;
  }
  const read = items as ReadItem[];
  if (keyReshaped(head, read)) return undefined;
  (head.data as Record<string, unknown>).endpoints = read.map((item) => item.value);
  return { data: head.data, memo: { text, bounds, items: read } };
}

/** The items of `memo` not in `taken`, by their lines. */
function movedItems(memo: ReadMemo, taken: ReadonlySet<ReadItem | undefined>): Map<string, ReadItem> {
  const moved = new Map<string, ReadItem>();
  memo.items.forEach((item, i) => {
    if (!taken.has(item)) moved.set(memo.text.slice(memo.bounds[i], memo.bounds[i + 1]), item);
  });
  return moved;
}

/**
 * The memo of a text the fast reader read whole, when its layout allows one. `read` holds the spans
 * of the nodes at depth 3 (the root mapping, the list, its items): each item must lie within its
 * own lines (from its `-` to the next item's), so that its lines alone give it.
 */
export function memoOfRead(text: string, read: FastPiece): ReadMemo | undefined {
  const layout = splitEndpoints(text);
  if (layout === undefined || readHead(layout) === undefined) return undefined;
  const list = (read.data as Record<string, unknown>).endpoints;
  const { bounds, indent } = layout;
  const count = bounds.length - 1;
  if (!Array.isArray(list) || list.length !== count) return undefined;
  const listStart = bounds[0] as number;
  const listEnd = bounds[count] as number;
  // the spans of the items, in order (nodes at depth 3 elsewhere lie outside the list)
  const spans: number[] = [];
  for (let i = 0; i < read.spans.length; i += 2) {
    const start = read.spans[i] as number;
    if (start >= listStart && start < listEnd) spans.push(start, read.spans[i + 1] as number);
  }
  if (spans.length !== 2 * count) return undefined;
  const items: ReadItem[] = [];
  for (let i = 0; i < count; i++) {
    const from = (bounds[i] as number) + indent;
    const to = i + 1 < count ? (bounds[i + 1] as number) + indent : listEnd;
    if ((spans[2 * i] as number) < from || (spans[2 * i + 1] as number) > to) return undefined;
    items.push({ value: list[i], reshaped: read.reshaped, suspectKeys: suspectKeys(list[i]) });
  }
  return { text, bounds, items };
}
