import { LineCounter, parseDocument, type Document, type YAMLError } from 'yaml';
import { fileIssue } from './issues.js';
import { MAX_ALIAS_COUNT, MAX_EXPANDED_SIZE, TOO_DEEP } from './limits.js';
import type { Locator } from './locate.js';
import { yamlLocator } from './locate-yaml.js';
import type { ConfigIssue } from './types.js';
import { expandedSize } from '../expanded-size.js';
import { badMergeSource, firstAlias, surprisingKeys } from './yaml-guards.js';

/**
 * The careful way to read config text: the `yaml` package, which keeps every node's position, so
 * each problem (syntax, aliases, keys YAML reads as non-text, then the schema's and rules'
 * findings through the locator) points at a line and column. Loaded only when the fast reader
 * declines or the config has problems (see fast-read.ts), and for `rotate-key`'s edits.
 */

function yamlMessage(error: YAMLError, text: string): string {
  if (/call stack/i.test(error.message)) return TOO_DEEP;
  switch (error.code) {
    case 'DUPLICATE_KEY': {
      const key = /^[^:\n]{0,60}/.exec(text.slice(error.pos[0]))?.[0].trim() ?? '';
      return `${key === '' ? 'a key' : `\`${key}\``} appears twice in the same mapping; keep one`;
    }
    case 'MULTIPLE_DOCS':
      return 'the config file must hold a single YAML document (found a second `---`)';
    default:
      return `invalid YAML: ${error.message.split('\n')[0]}`;
  }
}

/**
 * YAML syntax problems and unresolved tags. Empty when the document is sound. (A list or mapping
 * used as a key is turned into its text, which then fails as an unknown field or header name.)
 */
function yamlIssues(doc: Document, lineCounter: LineCounter, file: string, text: string): ConfigIssue[] {
  const hinted = new Set<number>();
  let deep = false;
  return [...doc.errors, ...doc.warnings].flatMap((e) => {
    const message = yamlMessage(e, text);
    const { line, col } = lineCounter.linePos(e.pos[0]);
    if (message.startsWith('invalid YAML')) {
      const expression = unquotedExpression(text, lineCounter, line);
      if (expression !== undefined) {
        // One hint per line: the parser's own errors there all come from the braces of `${…}`.
        if (hinted.has(line)) return [];
        hinted.add(line);
        return [fileIssue(file, UNQUOTED_EXPRESSION, { line, column: expression })];
      }
      // After such braces the parser's view of the lines below is off: what it says there is noise.
      if (hinted.size > 0) return [];
    }
    // The parser may run out of stack in more than one place (how many depends on the stack left
    // when it is called): one issue says it.
    if (message === TOO_DEEP) {
      if (deep) return [];
      deep = true;
    }
    return [
      fileIssue(file, message, { line, column: message === TOO_DEEP ? nestingStart(text, lineCounter, line) : col }),
    ];
  });
}

const UNQUOTED_EXPRESSION =
  'invalid YAML: a `${…}` inside a flow collection ({ … } or [ … ]) is read as YAML braces; put it in quotes: "${…}"';

/**
 * The column (from 1) of a `${` on `line` that is not right after a quote, when the line holds a
 * `{` or `[` before it: the usual cause of a syntax error on a line such as `body: { id: ${params.id} }`.
 */
function unquotedExpression(text: string, lineCounter: LineCounter, line: number): number | undefined {
  const start = lineCounter.lineStarts[line - 1] ?? 0;
  const end = text.indexOf('\n', start);
  const lineText = text.slice(start, end === -1 ? text.length : end);
  const at = /(?<!["'])\$\{/.exec(lineText)?.index;
  if (at === undefined || !/[[{]/.test(lineText.slice(0, at))) return undefined;
  return at + 1;
}

/**
 * Where the nesting on `line` starts (its first `[` or `{`, else its first character): the place
 * to point at when the reader ran out of stack. Where exactly it did depends on the stack size,
 * which differs between Node versions and builds.
 */
function nestingStart(text: string, lineCounter: LineCounter, line: number): number {
  const start = lineCounter.lineStarts[line - 1] ?? 0;
  const end = text.indexOf('\n', start);
  const lineText = text.slice(start, end === -1 ? text.length : end);
  const flow = /[[{]/.exec(lineText);
  return (flow?.index ?? /^\s*/.exec(lineText)?.[0].length ?? 0) + 1;
}

const BAD_MERGE =
  '`<<` is a YAML merge key: its value must be a mapping, an alias of one, or a list of those; to use `<<` as an ordinary key, quote it ("<<")';

/** The YAML document as plain data, or why it cannot be turned into data (alias bomb, undefined alias). */
function toData(doc: Document, lineCounter: LineCounter, file: string): { data: unknown } | { issue: ConfigIssue } {
  try {
    const data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    const alias = firstAlias(doc, lineCounter);
    if (alias !== undefined && expandedSize(data, MAX_EXPANDED_SIZE) > MAX_EXPANDED_SIZE) {
      const message = `the config's YAML aliases expand to more than ${MAX_EXPANDED_SIZE / 1024 / 1024} MiB of data; refused as a possible alias bomb`;
      return { issue: fileIssue(file, message, alias) };
    }
    return { data };
  } catch (err) {
    if (err instanceof RangeError) return { issue: fileIssue(file, TOO_DEEP) };
    if (/merge sources/i.test((err as Error).message)) {
      return { issue: fileIssue(file, BAD_MERGE, badMergeSource(doc, lineCounter) ?? { line: 1, column: 1 }) };
    }
    const message = /excessive alias count/i.test((err as Error).message)
      ? `the config's YAML aliases expand to too much data (more than ${MAX_ALIAS_COUNT}× reuse); refused as a possible alias bomb`
      : `invalid YAML: ${(err as Error).message}`;
    return { issue: fileIssue(file, message, firstAlias(doc, lineCounter) ?? { line: 1, column: 1 }) };
  }
}

/** What the positioned reader found: problems that stop the read, or the data and where things are. */
export type PositionedRead =
  { ok: false; issues: ConfigIssue[] } | { ok: true; data: unknown; locator: Locator; keyIssues: ConfigIssue[] };

/**
 * Reads `text` (labelled `file` in issues) with `yaml`. `keyIssues` are mapping keys YAML reads as
 * something other than their text; they are reported together with the schema's findings.
 */
export function readPositioned(text: string, file: string): PositionedRead {
  const lineCounter = new LineCounter();
  // YAML 1.2 core schema whatever a %YAML directive says (`yes` stays a string), duplicate keys are
  // errors, `<<` merge keys work (handy to share parts of endpoints), and logLevel 'error' keeps
  // errors and warnings in the document without ever writing to the process's stderr.
  const doc = parseDocument(text, {
    lineCounter,
    schema: 'core',
    merge: true,
    uniqueKeys: true,
    prettyErrors: false,
    logLevel: 'error',
  });
  const syntax = yamlIssues(doc, lineCounter, file, text);
  if (syntax.length > 0) return { ok: false, issues: syntax }; // the data of a broken document would only add confusing issues
  const converted = toData(doc, lineCounter, file);
  if ('issue' in converted) return { ok: false, issues: [converted.issue] };
  return {
    ok: true,
    data: converted.data,
    locator: yamlLocator(doc, lineCounter, text),
    keyIssues: surprisingKeys(doc, lineCounter, file),
  };
}
