/*
 * The text scans of the fast reader (fast-read.ts): what it does not take on, found without
 * parsing. A false alarm only costs speed — the whole file is then read by `yaml` with positions,
 * five times slower and twice the memory for a big imported config — so each scan looks for the
 * construct where YAML can have it, not for its characters anywhere: a `{&page}` in a URL
 * template or a `("422"|422)` in a regular expression is text.
 */

/** Constructs declined wherever their characters are. */
const DECLINED_SYNTAX = [
  /^%/m, // a directive
  /<</, // a merge key
  /(?:^|[\s[{,])\?(?:[ \t\r\n]|$)/m, // an explicit key
  /[\]}][ \t]*:/, // a flow collection as a key
  /^ *\t/m, // a tab in indentation (yaml: an error; js-yaml: accepted)
  /\ufeff/, // a byte order mark in a string (file bytes lose the leading one when decoded)
  /^(?:---|\.\.\.)[^\s]/m, // `----`: yaml reads text, js-yaml a document start and a sequence
  /^---[ \t]+[^\s#]/m, // content on the `---` line: yaml is stricter about what may follow it
  /[[{,]#/, // a comment right after `[`, `{` or `,`: yaml wants white space before it, js-yaml reads a comment
];

/**
 * An anchor or a tag (`&a`, `!t`): node properties follow white space, a `,`, or the `[`/`{` that
 * opens a flow collection — which itself follows white space, `[`, `{`, `,` or `:`, not the text
 * of a plain scalar (`https://x/search{?q}{&page}`). An anchor has a name: a `&` before white space
 * (`Gall & Gall`, a gift card's name) is text, or an error js-yaml reports (it then declines).
 */
const PROPERTY = /(?:^|[\s,[{])(?:&(?=\S)|!)/gm;
const FLOW_OPENED = /(?:^|[\s[{,:])$/;

function hasNodeProperty(text: string): boolean {
  for (const match of text.matchAll(PROPERTY)) {
    const opener = match[0].length === 2 ? match[0][0] : '';
    if (opener !== '[' && opener !== '{') return true;
    if (FLOW_OPENED.test(text.slice(Math.max(0, match.index - 1), match.index))) return true;
  }
  return false;
}

/**
 * A block scalar's header (`|`, `>-`, `|2`) with what precedes it on its line: it starts a node, so
 * it follows the line's indentation or a `:`, `-`, `?` (a flow indicator too: an error there) —
 * not a `|` inside a scalar. The candidates are found first, the line before each checked after.
 */
const HEADER = /[|>]([-+0-9]*)[ \t]*(?:#[^\n]*)?(?:\r?\n|$)/g;
const NODE_START = /(?:^|([:?\-,[{]))[ \t]*$/;
const LEADING_SPACES = /^ */;
const BLANK = /^[ \t]*\r?$/;

/** Where the line after the one at `at` starts (the text's length after the last line). */
function nextLineStart(text: string, at: number): number {
  const nl = text.indexOf('\n', at);
  return nl === -1 ? text.length : nl + 1;
}

/** The lines from `at` on, each without its line break. */
function* linesFrom(text: string, at: number): Generator<string> {
  while (at < text.length) {
    const end = nextLineStart(text, at);
    yield text.slice(at, end).replace(/\r?\n$/, '');
    at = end;
  }
}

interface Header {
  /** The spaces before the header's line's content. */
  lineIndent: number;
  /** What precedes it: `:`, `-`, …, or '' at the start of its line. */
  after: string;
  indicators: string;
  /** Where its first line of content may start. */
  body: number;
}

/** The block scalar headers of `text`. */
function* headers(text: string): Generator<Header> {
  for (const match of text.matchAll(HEADER)) {
    const lineStart = text.lastIndexOf('\n', match.index) + 1;
    const before = text.slice(lineStart, match.index);
    const start = NODE_START.exec(before);
    if (start === null) continue;
    const lineIndent = (LEADING_SPACES.exec(before) as RegExpExecArray)[0].length;
    const body = match.index + match[0].length;
    yield { lineIndent, after: start[1] ?? '', indicators: match[1] as string, body };
  }
}

/**
 * Whether a block scalar may read otherwise in js-yaml than in yaml. Kept final lines (`|+`) do.
 * Without an indentation indicator: yaml wants the empty lines it opens with no more indented than
 * its first line of content, and js-yaml does not check; empty lines of spaces up to the content's
 * indentation, content more indented than the header's line, read alike (an imported licence text:
 * `body: |`, a line of 12 spaces, the text at 12). With one (`|2`, an imported ASCII-art body):
 * lines of white space anywhere in it read differently, so none may be in the lines it could span
 * (up to the first line with content no more indented than the header's), and it must follow a
 * key's `:` or an item's `-` (at the root, js-yaml counts the indentation from another column).
 */
function hasMisreadBlockScalar(text: string): boolean {
  for (const header of headers(text)) {
    if (header.indicators.includes('+')) return true;
    const indicated = /[0-9]/.test(header.indicators);
    if (indicated && header.after !== ':' && header.after !== '-') return true;
    let widest = 0;
    let spaced = false;
    let content: string | undefined;
    for (const line of linesFrom(text, header.body)) {
      if (!BLANK.test(line)) {
        content = line;
        if (!indicated || (LEADING_SPACES.exec(line) as RegExpExecArray)[0].length <= header.lineIndent) break;
        continue;
      }
      if (line.replace(/\r$/, '') === '') continue;
      if (indicated || /[\t\r]/.test(line)) return true;
      spaced = true;
      widest = Math.max(widest, line.length);
    }
    if (indicated || !spaced) continue;
    const indent = content === undefined ? 0 : (LEADING_SPACES.exec(content) as RegExpExecArray)[0].length;
    if (content === undefined || content[indent] === '\t' || indent <= header.lineIndent || widest > indent)
      return true;
  }
  return false;
}

/** Whether `text` holds something the fast reader leaves to `yaml` (see fast-read.ts), by a scan of its text. */
export function declinedSyntax(text: string): boolean {
  return DECLINED_SYNTAX.some((pattern) => pattern.test(text)) || hasNodeProperty(text) || hasMisreadBlockScalar(text);
}
