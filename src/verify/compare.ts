import type { IgnoreList } from './ignore.js';
import { ITEMS } from './json-path.js';
import { certainlySameShape } from './same-shape.js';
import { shapeOf, type JsonType, type PathShape, type Shape } from './shape.js';
import { looksEnumerated } from './volatile.js';

/** An answer as the comparison reads it. */
export interface ComparedAnswer {
  status: number;
  /** The media type, lower case, without parameters (`application/json`); '' when there is none. */
  mediaType: string;
  body: Buffer;
}

/** What changed between the mock's answer and the real API's. */
export type ChangeKind = 'status' | 'content-type' | 'body' | 'type' | 'added' | 'removed' | 'renamed' | 'enum';

/** One difference, at a JSON path (or `status`, `content-type`). */
export interface Change {
  kind: ChangeKind;
  path: string;
  /** What the mock has there, in words (`number`, `"active"`, `200`). */
  mock?: string;
  /** What the real API has there. */
  upstream?: string;
  /** The change in one line, without the path. */
  message: string;
}

export interface CompareOptions {
  method: string;
  /** The status the example expects from the real API, when it says. */
  expect?: number;
  ignore: IgnoreList;
  /** Field names whose values are secrets (never shown, never read as enum values). */
  secretName(name: string): boolean;
}

/** `application/json; charset=utf-8` → `application/json`. */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

const isJsonType = (type: string): boolean =>
  type === 'application/json' || type.endsWith('+json') || type === 'text/json';

const typesText = (types: ReadonlySet<JsonType>): string => [...types].sort().join('|');
const quoteList = (values: Iterable<string>): string => [...values].map((v) => JSON.stringify(v)).join(', ');

/** A body as JSON: undefined when empty, `invalid` when it is not JSON. */
function parseBody(body: Buffer): { value: unknown } | undefined | 'invalid' {
  const text = body.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return 'invalid';
  }
}

function compareStatus(mock: ComparedAnswer, upstream: ComparedAnswer, expect: number | undefined): Change | undefined {
  if (mock.status !== upstream.status)
    return {
      kind: 'status',
      path: 'status',
      mock: String(mock.status),
      upstream: String(upstream.status),
      message: `mock ${mock.status}, upstream ${upstream.status}`,
    };
  if (expect !== undefined && upstream.status !== expect) {
    return {
      kind: 'status',
      path: 'status',
      mock: String(mock.status),
      upstream: String(upstream.status),
      message: `both answer ${upstream.status}; the example expects ${expect}`,
    };
  }
  return undefined;
}

/**
 * Compares the mock's answer with the real API's: status (and the example's `expect`), media type,
 * then, when both are JSON and the statuses agree, the body's shape — types by JSON path, fields
 * present in one and not the other (a removal and an addition of the same type beside each other
 * read as a rename), array items merged, and enum-like strings the real API sends that the mock
 * never does. Values are never compared otherwise.
 */
export function compareAnswers(mock: ComparedAnswer, upstream: ComparedAnswer, options: CompareOptions): Change[] {
  const changes: Change[] = [];
  const status = compareStatus(mock, upstream, options.expect);
  if (status !== undefined) changes.push(status);
  const bothEmpty = mock.body.length === 0 && upstream.body.length === 0;
  if (mock.mediaType !== upstream.mediaType && !bothEmpty) {
    changes.push({
      kind: 'content-type',
      path: 'content-type',
      mock: mock.mediaType || 'none',
      upstream: upstream.mediaType || 'none',
      message: `mock ${mock.mediaType || 'none'}, upstream ${upstream.mediaType || 'none'}`,
    });
  }
  if (changes.length > 0 || options.method === 'HEAD' || !isJsonType(upstream.mediaType)) return changes;
  const m = parseBody(mock.body);
  const u = parseBody(upstream.body);
  if (u === 'invalid')
    return [
      {
        kind: 'body',
        path: '$',
        message: `the upstream's body is not valid JSON (content-type ${upstream.mediaType})`,
      },
    ];
  if (m === 'invalid')
    return [{ kind: 'body', path: '$', message: `the mock's body is not valid JSON (content-type ${mock.mediaType})` }];
  if (m === undefined || u === undefined) {
    if (m === u) return changes;
    return [
      {
        kind: 'body',
        path: '$',
        message:
          m === undefined
            ? 'the mock answers with no body, the upstream with JSON'
            : 'the upstream answers with no body, the mock with JSON',
      },
    ];
  }
  if (certainlySameShape(m.value, u.value)) return changes;
  return compareShapes(
    shapeOf(m.value, options.ignore, options.secretName),
    shapeOf(u.value, options.ignore, options.secretName),
  );
}

/** Whether `entry` or one of its parents (in `shape`) is in `closed`: something above it was reported already. */
function isClosed(entry: PathShape, shape: Shape, closed: ReadonlySet<string>): boolean {
  if (closed.size === 0) return false;
  for (
    let at: PathShape | undefined = entry;
    at !== undefined;
    at = at.parent === undefined ? undefined : shape.get(at.parent)
  ) {
    if (closed.has(at.key)) return true;
  }
  return false;
}

const parentOf = (shape: Shape, entry: PathShape): PathShape | undefined =>
  entry.parent === undefined ? undefined : shape.get(entry.parent);

/** The changes between two shapes (mock, upstream), in the order the paths were found. */
export function compareShapes(mock: Shape, upstream: Shape): Change[] {
  const changes: Change[] = [];
  const closed = new Set<string>();
  const added: Array<[string, PathShape]> = [];
  const removed: Array<[string, PathShape]> = [];
  const keys = [...upstream.keys(), ...[...mock.keys()].filter((k) => !upstream.has(k))];
  for (const key of keys) {
    const m = mock.get(key);
    const u = upstream.get(key);
    const entry = (u ?? m) as PathShape;
    if (isClosed(entry, u === undefined ? mock : upstream, closed)) continue;
    if (entry.segments[entry.segments.length - 1] === ITEMS) {
      // The items of an array empty on one side have no shape there to compare.
      if ((parentOf(mock, entry)?.filled ?? 0) === 0 || (parentOf(upstream, entry)?.filled ?? 0) === 0) {
        closed.add(key);
        continue;
      }
    }
    if (m === undefined || u === undefined) {
      const other = m === undefined ? mock : upstream;
      const parent = parentOf(other, entry);
      if (parent === undefined || parent.objects === 0) continue; // the parent's own change says it
      if (m === undefined) added.push([key, u as PathShape]);
      else if (m.present === (parentOf(mock, m)?.objects ?? 1)) removed.push([key, m]); // optional in the mock: never promised
      closed.add(key);
      continue;
    }
    const fresh = [...u.types].filter((t) => !m.types.has(t));
    if (fresh.length > 0) {
      changes.push({
        kind: 'type',
        path: key,
        mock: typesText(m.types),
        upstream: typesText(u.types),
        message: `type ${typesText(m.types)} → ${typesText(u.types)}`,
      });
      // A container on one side only: what is inside it is part of this change.
      if (!m.types.has('object') && !m.types.has('array')) closed.add(key);
      else if ((u.types.has('object') && !m.types.has('object')) || (u.types.has('array') && !m.types.has('array')))
        closed.add(key);
      continue;
    }
    if (
      m.tokens !== undefined &&
      u.tokens !== undefined &&
      looksEnumerated(m.strings, m.tokens.size) &&
      looksEnumerated(u.strings, u.tokens.size)
    ) {
      const news = [...u.tokens].filter((v) => !(m.tokens as Set<string>).has(v));
      if (news.length > 0) {
        changes.push({
          kind: 'enum',
          path: key,
          mock: quoteList(m.tokens),
          upstream: quoteList(u.tokens),
          message: `new value${news.length === 1 ? '' : 's'} ${quoteList(news)} (the mock sends ${quoteList(m.tokens)})`,
        });
      }
    }
  }
  return [...changes, ...pairRenames(upstream, added, removed)];
}

/** Removed and added fields of one parent with the same types, paired in order: renames. The rest as they are. */
function pairRenames(
  upstream: Shape,
  added: Array<[string, PathShape]>,
  removed: Array<[string, PathShape]>,
): Change[] {
  const out: Change[] = [];
  const taken = new Set<string>();
  for (const [key, m] of removed) {
    const match = added.find(
      ([k, u]) => !taken.has(k) && u.parent === m.parent && typesText(u.types) === typesText(m.types),
    );
    if (match !== undefined) {
      taken.add(match[0]);
      out.push({
        kind: 'renamed',
        path: key,
        mock: key,
        upstream: match[0],
        message: `renamed to ${match[0]} (${typesText(m.types)})`,
      });
    } else {
      out.push({
        kind: 'removed',
        path: key,
        mock: typesText(m.types),
        message: `missing from the upstream (the mock has ${typesText(m.types)})`,
      });
    }
  }
  for (const [key, u] of added) {
    if (taken.has(key)) continue;
    const parent = parentOf(upstream, u);
    const optional = parent !== undefined && u.present < parent.objects ? `, in ${u.present} of ${parent.objects}` : '';
    out.push({
      kind: 'added',
      path: key,
      upstream: typesText(u.types),
      message: `new in the upstream (${typesText(u.types)}${optional})`,
    });
  }
  return out;
}
