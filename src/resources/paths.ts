import { PARAM, segmentsOf } from '../config/collection-path.js';

// Request paths matched under a collection's path (its grammar: config/collection-path.ts).

/** What a request path names under a collection. */
export interface PathMatch {
  /** `collection`, `item` (`<path>/:id`) or `action` (`<path>/:id/<action>`). */
  kind: 'collection' | 'item' | 'action';
  /** The values of the collection path's parameters, by name. */
  params: Record<string, string>;
  /** Those values joined: which part of the collection (`''` when the path has none). */
  parent: string;
  id?: string;
  action?: string;
}

/** A compiled collection path: matches request paths (already without the base path). */
export interface PathMatcher {
  /** The number of segments of the collection path. */
  readonly depth: number;
  match(segments: readonly string[]): PathMatch | undefined;
}

function decode(segment: string): string | undefined {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** Compiles a collection path; `actions` are the names an `action` match may have. */
export function compilePath(path: string, actions: readonly string[]): PathMatcher {
  const pattern = segmentsOf(path).map((segment) => {
    const m = PARAM.exec(segment);
    return m === null ? { text: segment } : { param: m[1] as string };
  });
  const depth = pattern.length;
  return {
    depth,
    match(segments) {
      const extra = segments.length - depth;
      if (extra < 0 || extra > 2) return undefined;
      const params: Record<string, string> = Object.create(null) as Record<string, string>;
      let parent = '';
      for (let i = 0; i < depth; i++) {
        const want = pattern[i] as { text?: string; param?: string };
        const got = segments[i] as string;
        if (want.text !== undefined) {
          if (got !== want.text) return undefined;
          continue;
        }
        const value = decode(got);
        if (value === undefined || value === '') return undefined;
        params[want.param as string] = value;
        parent += parent === '' ? value : `\u0000${value}`;
      }
      if (extra === 0) return { kind: 'collection', params, parent };
      const id = decode(segments[depth] as string);
      if (id === undefined || id === '') return undefined;
      if (extra === 1) return { kind: 'item', params, parent, id };
      const action = segments[depth + 1] as string;
      return actions.includes(action) ? { kind: 'action', params, parent, id, action } : undefined;
    },
  };
}

/** A request path (after the base path) split into its segments, a trailing slash ignored. */
export function requestSegments(path: string): string[] {
  return segmentsOf(path.length === 0 ? '/' : path);
}
