/**
 * Path templates from evidence: a configured endpoint whose path matches, else a path of an
 * OpenAPI description, else segment shapes (numbers, UUIDs, prefixed ids, long opaque ids, dates);
 * plain words become a parameter only with at least {@link MIN_WORD_SAMPLES} different values in
 * one place and no literal sibling there.
 */

/** How many different plain words one segment must take before it is read as a parameter. */
export const MIN_WORD_SAMPLES = 4;

const SHAPES: ReadonlyArray<[string, RegExp]> = [
  ['number', /^\d+$/],
  ['uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i],
  ['date', /^\d{4}-\d{2}-\d{2}(?:T[0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/],
  ['prefixed id', /^[A-Za-z]{1,12}_(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{6,}$/],
  ['hex id', /^[0-9a-f]{16,}$/i],
  ['opaque id', /^(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{20,}$/],
];

/** The shape of an id-like segment, or undefined for a plain word. */
export function segmentShape(segment: string): string | undefined {
  return SHAPES.find(([, re]) => re.test(segment))?.[0];
}

/** Whether `path` (a concrete request path) fits the route `template` (`:name` segments, a trailing `*`). */
export function fitsTemplate(template: string, path: string): boolean {
  const t = template.split('/').filter((s) => s !== '');
  const p = path.split('/').filter((s) => s !== '');
  for (let i = 0; i < t.length; i++) {
    const seg = t[i] as string;
    if (seg === '*' && i === t.length - 1) return p.length >= i;
    if (i >= p.length) return false;
    if (seg.startsWith(':')) continue;
    if (seg !== p[i]) return false;
  }
  return t.length === p.length;
}

/** An OpenAPI path (`/pets/{petId}`) as a route template (`/pets/:petId`). */
export function openApiTemplate(path: string): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => `:${name.replace(/[^A-Za-z0-9_]/g, '_')}`);
}

const singular = (word: string): string =>
  word.endsWith('ies')
    ? `${word.slice(0, -3)}y`
    : word.endsWith('ses')
      ? word.slice(0, -2)
      : word.endsWith('s') && !word.endsWith('ss')
        ? word.slice(0, -1)
        : word;

/** Parameter names for the parameter positions of `segments`: the last is `id`, earlier ones `<singular word before>Id`. */
function nameParams(segments: readonly string[], params: readonly number[]): Map<number, string> {
  const names = new Map<number, string>();
  const used = new Set<string>();
  params.forEach((at, k) => {
    const before = at > 0 ? (segments[at - 1] as string) : '';
    const word =
      /^[A-Za-z][A-Za-z0-9]*$/.test(before) && !params.includes(at - 1)
        ? singular(before).replace(/-./g, (m) => (m[1] as string).toUpperCase())
        : 'param';
    let name = k === params.length - 1 ? 'id' : `${word}Id`;
    for (let n = 2; used.has(name); n++) name = `${k === params.length - 1 ? 'id' : `${word}Id`}${n}`;
    used.add(name);
    names.set(at, name);
  });
  return names;
}

/** What decided a path's template, for the summary. */
export type TemplateSource = 'endpoint' | 'openapi' | 'shapes' | 'literal';

export interface TemplateChoice {
  template: string;
  source: TemplateSource;
}

/**
 * Infers the template of each distinct path of one method. `known` are the templates of the config's
 * endpoints and of the OpenAPI description (in that order of precedence, given as [template, source]).
 */
export function inferTemplates(
  paths: readonly string[],
  known: ReadonlyArray<[string, TemplateSource]>,
): Map<string, TemplateChoice> {
  const out = new Map<string, TemplateChoice>();
  const rest: string[] = [];
  for (const path of new Set(paths)) {
    const hit = known.find(([t]) => fitsTemplate(t, path));
    if (hit !== undefined) out.set(path, { template: hit[0], source: hit[1] });
    else rest.push(path);
  }
  // Segment shapes first; then plain words where the evidence is strong.
  const split = rest.map((p) => p.split('/').filter((s) => s !== ''));
  const isParam = split.map((segs) => segs.map((s) => segmentShape(s) !== undefined));
  const literalTemplates = known.map(([t]) => t.split('/').filter((s) => s !== ''));
  const maxLen = Math.max(0, ...split.map((s) => s.length));
  for (let at = 0; at < maxLen; at++) {
    // Paths alike but for this segment (other segments compared after shapes).
    const groups = new Map<string, Set<string>>();
    split.forEach((segs, i) => {
      if (at >= segs.length || isParam[i]?.[at] === true) return;
      const key = `${segs.length}|${segs.map((s, j) => (j === at ? '' : isParam[i]?.[j] === true ? ':' : s)).join('/')}`;
      let set = groups.get(key);
      if (set === undefined) groups.set(key, (set = new Set()));
      set.add(segs[at] as string);
    });
    for (const [key, words] of groups) {
      if (words.size < MIN_WORD_SAMPLES) continue;
      const prefix = key
        .slice(key.indexOf('|') + 1)
        .split('/')
        .slice(0, at);
      // A literal sibling: a configured route with a literal word in this place after the same prefix.
      const sibling = literalTemplates.some(
        (t) =>
          t.length > at &&
          !(t[at] as string).startsWith(':') &&
          prefix.every((p, j) => (p === ':' ? (t[j] as string).startsWith(':') : t[j] === p)),
      );
      if (sibling) continue;
      split.forEach((segs, i) => {
        const k = `${segs.length}|${segs.map((s, j) => (j === at ? '' : isParam[i]?.[j] === true ? ':' : s)).join('/')}`;
        if (k === key) (isParam[i] as boolean[])[at] = true;
      });
    }
  }
  split.forEach((segs, i) => {
    const params = segs.map((_, j) => j).filter((j) => isParam[i]?.[j] === true);
    const names = nameParams(segs, params);
    const template = '/' + segs.map((s, j) => (names.has(j) ? `:${names.get(j)}` : s)).join('/');
    out.set(rest[i] as string, { template, source: params.length > 0 ? 'shapes' : 'literal' });
  });
  return out;
}

/** The parameters a concrete path gives its template: `{ id: "42" }` for `/users/:id` and `/users/42`. */
export function paramsOf(template: string, path: string): Record<string, string> {
  const t = template.split('/').filter((s) => s !== '');
  const p = path.split('/').filter((s) => s !== '');
  const params: Record<string, string> = {};
  t.forEach((seg, i) => {
    if (seg.startsWith(':')) params[seg.slice(1)] = p[i] as string;
  });
  return params;
}
