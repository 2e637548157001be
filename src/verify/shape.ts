import type { IgnoreList } from './ignore.js';
import { ANY_KEY, formatSegment, ITEMS, type Segment } from './json-path.js';
import { isEnumField, isTokenValue, isVolatileKey, MAX_ENUM_VALUES } from './volatile.js';

/** The JSON types a comparison tells apart (integers and fractions are both `number`). */
export type JsonType = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';

/** What one JSON path holds across a body: every value found there, items of arrays merged. */
export interface PathShape {
  segments: Segment[];
  /** The path as written (`$.items[].id`): its key in the {@link Shape}. */
  key: string;
  /** The parent's key; undefined for the body itself. */
  parent?: string;
  types: Set<JsonType>;
  /** How many objects of the parent's path held this field (once per object). */
  present: number;
  /** How many times the value here was an object: the parent count of its fields. */
  objects: number;
  /** How many times the value here was an array with at least one item. */
  filled: number;
  /** The distinct strings seen here while every one is enum-like; undefined once one is not (or there are too many). */
  tokens?: Set<string>;
  /** How many strings were seen here. */
  strings: number;
}

/** A body's shape: its paths in the order first seen. */
export type Shape = Map<string, PathShape>;

/** Deeper values are not looked into (a body this deep is data, not a shape to compare). */
const MAX_DEPTH = 128;

function typeOf(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const t = typeof value;
  return t === 'string' || t === 'number' || t === 'boolean' ? t : 'object';
}

/** The last field name of a path, for the enum-like test (items take their array's name). */
function fieldName(segments: readonly Segment[]): string | undefined {
  for (let i = segments.length - 1; i >= 0; i--) {
    const s = segments[i];
    if (s === ITEMS) continue;
    return typeof s === 'string' ? s : undefined;
  }
  return undefined;
}

/**
 * The shape of a JSON value: for each path, the types seen, how often it is present in the objects
 * of its parent path, and the enum-like strings. Keys that look like ids are folded into `*`;
 * paths covered by `ignore` are left out with everything under them; values under fields named
 * like secrets (`secretName`) are never kept.
 */
export function shapeOf(value: unknown, ignore: IgnoreList, secretName: (name: string) => boolean): Shape {
  const shape: Shape = new Map();
  /** Each path's children by segment (null: ignored), so a path is formatted and matched once. */
  const children = new Map<PathShape, Map<Segment, PathShape | null>>();

  function create(segments: Segment[], key: string, parent?: string): PathShape | undefined {
    if (ignore.covers(segments)) return undefined;
    const name = fieldName(segments);
    const entry: PathShape = { segments, key, types: new Set(), present: 0, objects: 0, filled: 0, strings: 0 };
    if (parent !== undefined) entry.parent = parent;
    if (isEnumField(name) && (name === undefined || !secretName(name))) entry.tokens = new Set();
    shape.set(key, entry);
    return entry;
  }

  function node(parent: PathShape, segment: Segment): PathShape | undefined {
    let known = children.get(parent);
    if (known === undefined) children.set(parent, (known = new Map()));
    let child = known.get(segment);
    if (child === undefined)
      known.set(
        segment,
        (child = create([...parent.segments, segment], parent.key + formatSegment(segment), parent.key) ?? null),
      );
    return child ?? undefined;
  }

  function walk(v: unknown, entry: PathShape, depth: number): void {
    const type = typeOf(v);
    entry.types.add(type);
    if (type === 'string') {
      entry.strings++;
      if (entry.tokens !== undefined) {
        if (isTokenValue(v as string) && (entry.tokens.size < MAX_ENUM_VALUES || entry.tokens.has(v as string)))
          entry.tokens.add(v as string);
        else delete entry.tokens;
      }
      return;
    }
    if (depth >= MAX_DEPTH) return;
    if (type === 'array') {
      const items = v as unknown[];
      if (items.length > 0) entry.filled++;
      const child = node(entry, ITEMS);
      if (child === undefined) return;
      for (const item of items) walk(item, child, depth + 1);
      return;
    }
    if (type !== 'object') return;
    entry.objects++;
    // Field names are unique in an object: only the one `*` child of its id-like keys is met more than once.
    let anyCounted = false;
    for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
      const volatile = isVolatileKey(k);
      const child = node(entry, volatile ? ANY_KEY : k);
      if (child === undefined) continue;
      if (!volatile) child.present++;
      else if (!anyCounted) {
        anyCounted = true;
        child.present++;
      }
      walk(item, child, depth + 1);
    }
  }

  const root = create([], '$');
  if (root !== undefined) {
    root.present = 1;
    walk(value, root, 0);
  }
  return shape;
}
