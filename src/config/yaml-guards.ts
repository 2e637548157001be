import { isAlias, isMap, isPair, isScalar, isSeq, visit, type Document, type LineCounter } from 'yaml';
import { formatFieldPath } from './field-path.js';
import { fileIssue } from './issues.js';
import type { ConfigIssue } from './types.js';

/**
 * Checks that keep hostile or surprising YAML from reaching validation: how big aliases expand,
 * how many values a file holds, and mapping keys YAML reads as something other than text.
 */

/**
 * Size of `data` written out as JSON with every shared value copied, roughly (escapes aside).
 * Stops counting once past `limit`. A shared value is measured once and then added for each
 * reuse, so this is quick however much the aliases expand. A value inside itself (a cycle,
 * reported later by the rules) is counted once.
 */
export function expandedSize(data: unknown, limit: number): number {
  const EXIT = Symbol('exit');
  const measured = new Map<object, number>();
  const onPath = new Set<object>();
  const starts: number[] = [];
  const stack: unknown[] = [data];
  let size = 0;
  while (stack.length > 0 && size <= limit) {
    const value = stack.pop();
    if (value === EXIT) {
      const done = stack.pop() as object;
      onPath.delete(done);
      measured.set(done, size - (starts.pop() as number));
    } else if (typeof value !== 'object' || value === null) {
      size += typeof value === 'string' ? value.length + 2 : String(value).length + 1;
    } else if (measured.has(value)) {
      size += measured.get(value) as number;
    } else if (onPath.has(value)) {
      size += 1;
    } else {
      starts.push(size);
      size += 1;
      onPath.add(value);
      stack.push(value, EXIT);
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) stack.push(value[i]);
      } else {
        for (const key of Object.keys(value)) {
          size += key.length;
          stack.push((value as Record<string, unknown>)[key]);
        }
      }
    }
  }
  return size;
}

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
