import { isAlias, isMap, isPair, isScalar, isSeq, visit, type Document, type LineCounter } from 'yaml';
import { formatFieldPath } from './field-path.js';
import { fileIssue } from './issues.js';
import type { ConfigIssue } from './types.js';

/**
 * Checks that keep hostile or surprising YAML from reaching validation: how big aliases expand,
 * how many values a file holds, and mapping keys YAML reads as something other than text.
 */

/**
 * Mapping keys YAML reads as something other than what was written: `0123:` becomes the key `123`,
 * `~:` the key `null`. Keys are turned into text afterwards, so the schema cannot see this; a header
 * named `0123` in the file would silently be sent as `123`.
 */
export function surprisingKeys(doc: Document, lineCounter: LineCounter, file: string): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  visit(doc, {
    Pair(_, pair, ancestors) {
      const key = pair.key;
      if (!isScalar(key) || typeof key.value === 'string' || typeof key.value === 'symbol' || key.source === undefined)
        return;
      if (String(key.value) === key.source) return;
      const { line, col } = lineCounter.linePos(key.range?.[0] ?? 0);
      const where = formatFieldPath(fieldPathOf(ancestors));
      const read = key.value === null ? 'null' : `the ${typeof key.value} ${String(key.value)}`;
      const message = `${where === '' ? '' : `${where}: `}the key \`${key.source}\` is read by YAML as ${read}; put it in quotes`;
      issues.push(fileIssue(file, message, { line, column: col }));
    },
  });
  return issues;
}

/** The field path of a node from its ancestors in `visit` (pairs give keys, sequences indexes). */
function fieldPathOf(ancestors: readonly unknown[]): Array<string | number> {
  const path: Array<string | number> = [];
  ancestors.forEach((node, i) => {
    if (isPair(node) && isScalar(node.key)) path.push(String(node.key.value));
    else if (isSeq(node)) path.push(node.items.indexOf(ancestors[i + 1] as never));
  });
  return path;
}

/** Where the first alias (or merge of one) is, if the document has any. */
export function firstAlias(doc: Document, lineCounter: LineCounter): { line: number; column: number } | undefined {
  let offset: number | undefined;
  visit(doc, {
    Alias(_, node) {
      offset = node.range?.[0] ?? 0;
      return visit.BREAK;
    },
  });
  if (offset === undefined) return undefined;
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}

/** Whether `key` is a `<<` merge key: plain `<<` (a quoted "<<" is an ordinary key). */
function isMergeKey(key: unknown): boolean {
  if (!isScalar(key)) return false;
  const value: unknown = key.value;
  return typeof value === 'symbol'
    ? value.description === '<<'
    : value === '<<' && (key.type === undefined || key.type === 'PLAIN');
}

/**
 * Where the first `<<` merge key is whose value is not a mapping, an alias of one, or a list of
 * those: what makes `yaml`'s toJS throw "Merge sources must be maps or map aliases", which names
 * no place.
 */
export function badMergeSource(doc: Document, lineCounter: LineCounter): { line: number; column: number } | undefined {
  const isSource = (node: unknown): boolean => isMap(isAlias(node) ? node.resolve(doc) : node);
  let offset: number | undefined;
  visit(doc, {
    Pair(_, pair) {
      if (!isMergeKey(pair.key)) return undefined;
      const value = isAlias(pair.value) ? pair.value.resolve(doc) : pair.value;
      if (isSeq(value) ? value.items.every(isSource) : isSource(value)) return undefined;
      offset = (pair.key as { range?: [number, number, number] | null }).range?.[0] ?? 0;
      return visit.BREAK;
    },
  });
  if (offset === undefined) return undefined;
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}
