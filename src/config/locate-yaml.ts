import {
  isAlias,
  isCollection,
  isMap,
  isPair,
  isScalar,
  isSeq,
  type Document,
  type LineCounter,
  type Node,
} from 'yaml';
import type { FieldPath } from './field-path.js';
import type { Locator, Position } from './locate.js';
import { sourceOffsetOf } from './locate-text.js';

interface Found {
  node: Node | null;
  key: Node | null;
}

/** A locator over a parsed YAML document. Walks one path per call: cost is the path's length (and map sizes). */
export function yamlLocator(doc: Document, lineCounter: LineCounter, source: string): Locator {
  function deref(node: unknown): Node | null {
    let current = node;
    // An alias chain is at most as long as the number of anchors; guard anyway.
    for (let i = 0; i < 1000 && isAlias(current); i++) current = current.resolve(doc);
    return isAlias(current) ? null : ((current as Node | null) ?? null);
  }

  function walk(path: FieldPath): Found {
    let node = deref(doc.contents);
    let key: Node | null = null;
    for (const segment of path) {
      let next: Node | null = null;
      let nextKey: Node | null = null;
      if (isMap(node)) {
        // the last pair wins, as when the YAML is turned into data
        let collectionKey: Node | null = null;
        for (let i = node.items.length - 1; i >= 0; i--) {
          const pair = node.items[i];
          if (!isPair(pair)) continue;
          if (isScalar(pair.key) && String(pair.key.value) === String(segment)) {
            nextKey = pair.key;
            next = deref(pair.value) ?? pair.key; // `key:` with no value points at the key
            break;
          }
          if (isCollection(pair.key)) collectionKey = pair.key;
        }
        // a list or mapping key becomes text (`[ a, b ]`) in the data; point at such a key
        if (next === null && collectionKey !== null && /^[[{]/.test(String(segment))) next = nextKey = collectionKey;
      } else if (isSeq(node) && typeof segment === 'number') {
        next = deref(node.items[segment]);
      }
      if (next === null) return { node, key: null };
      node = next;
      key = nextKey;
    }
    return { node, key };
  }

  function positionOf(node: Node | null): Position {
    const offset = node?.range?.[0];
    if (offset === undefined) return { line: 1, column: 1 };
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  }

  return {
    valueAt: (path) => positionOf(walk(path).node),
    keyAt(path) {
      const found = walk(path);
      return positionOf(found.key ?? found.node);
    },
    textAt(path, offset) {
      const { node } = walk(path);
      if (!isScalar(node) || node.range == null || typeof node.value !== 'string') return positionOf(node);
      const at = sourceOffsetOf(source, node.range[0], node.range[1], String(node.type), offset);
      const { line, col } = lineCounter.linePos(at);
      return { line, column: col };
    },
    plainSourceAt(path) {
      const { node } = walk(path);
      if (!isScalar(node) || node.type !== 'PLAIN' || node.range == null) return undefined;
      return source.slice(node.range[0], node.range[1]);
    },
  };
}
