import { numberOf, readOwn, textOf } from '../expression/values.js';
import { bracketKeys, decodeFormPart, FORBIDDEN_KEYS } from './form.js';
import type { ResourceStyle } from './model.js';
import type { Page, PageQuery, StoredObject } from './store.js';
import type { Style, StyleAnswer } from './styles.js';

/**
 * Lists in each style's shape and pages: stripe (`limit` 1–100, default 10, newest first,
 * `starting_after`, `ending_before`), openai (`limit` default 20, `order`, `after`, `before`),
 * github (a JSON array, `per_page` up to 100, `page`, and a `Link` header as GitHub writes it),
 * rest (`{"items","next"}`, oldest first, `limit`, `cursor`). Cursors are object ids, so a page
 * read later does not shift when objects are created between reads; GitHub's page numbers carry a
 * snapshot in their links for the same reason. Every other query parameter filters.
 */

type Obj = Record<string, unknown>;

/** A list request, as the query string gives it. */
export interface ListInput {
  /** Query parameters by name: text, a list of texts (repeated), or nested (brackets). */
  readonly query: Readonly<Obj>;
  /** The request path with the base path (Stripe's `url`, GitHub's links). */
  readonly urlPath: string;
  /** `http://host:port`, for GitHub's links. */
  readonly origin: string;
  /** The object type in messages (`customer`). */
  readonly label: string;
}

/** How one list request pages: what to ask the store, and how to write the answer. */
export interface ListPlan {
  readonly query: Omit<PageQuery, 'parent' | 'test'>;
  /** Query parameters that are not paging: filters. */
  readonly filters: Obj;
  /** GitHub: the snapshot and page number, to write the Link header (needs a count). */
  readonly pages?: { readonly snapshot: number | undefined; readonly page: number; readonly perPage: number };
  /** The items as the store found them (reversed for a page read backwards). */
  readonly reverse: boolean;
}

const RESERVED: Readonly<Record<ResourceStyle, readonly string[]>> = {
  stripe: ['limit', 'starting_after', 'ending_before', 'expand'],
  openai: ['limit', 'after', 'before', 'order'],
  github: ['per_page', 'page', 'direction', 'sort', 'snapshot'],
  rest: ['limit', 'cursor'],
};

const one = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined;

function filtersOf(query: Readonly<Obj>, style: ResourceStyle): Obj {
  const filters: Obj = {};
  const reserved = RESERVED[style];
  for (const key in query) {
    if (reserved.includes(key)) continue;
    const value = query[key];
    if (style === 'github' && key === 'state' && value === 'all') continue; // GitHub: every state
    filters[key] = value;
  }
  return filters;
}

type Planned = ListPlan | StyleAnswer;

function stripeLimit(style: Style, text: string | undefined, fallback: number): number | StyleAnswer {
  if (text === undefined) return fallback;
  if (!/^-?\d+$/.test(text)) return style.invalid(`Invalid integer: ${text}`, 'limit');
  const n = Number(text);
  if (n < 1) return style.invalid('This value must be greater than or equal to 1.', 'limit');
  if (n > 100) return style.invalid('This value must be less than or equal to 100.', 'limit');
  return n;
}

function openaiLimit(style: Style, text: string | undefined): number | StyleAnswer {
  if (text === undefined) return 20;
  if (!/^-?\d+$/.test(text))
    return style.invalid(`Invalid 'limit': expected an integer, but got '${text}' instead.`, 'limit', 'invalid_type');
  const n = Number(text);
  if (n < 1)
    return style.invalid(
      `Invalid 'limit': integer below minimum value. Expected a value >= 1, but got ${n} instead.`,
      'limit',
      'integer_below_min_value',
    );
  if (n > 100)
    return style.invalid(
      `Invalid 'limit': integer above maximum value. Expected a value <= 100, but got ${n} instead.`,
      'limit',
      'integer_above_max_value',
    );
  return n;
}

/** Reads the paging parameters of a list request: a plan, or the style's 400. */
export function planList(style: Style, input: ListInput): Planned {
  const q = input.query;
  const filters = filtersOf(q, style.name);
  switch (style.name) {
    case 'stripe': {
      const limit = stripeLimit(style, one(q.limit), 10);
      if (typeof limit !== 'number') return limit;
      const after = one(q.starting_after);
      const before = one(q.ending_before);
      if (after !== undefined && before !== undefined)
        return style.invalid(
          'You may only specify one of these parameters: starting_after, ending_before.',
          'ending_before',
        );
      if (before !== undefined) return { query: { order: 'asc', after: before, limit }, filters, reverse: true };
      return { query: { order: 'desc', ...(after === undefined ? {} : { after }), limit }, filters, reverse: false };
    }
    case 'openai': {
      const limit = openaiLimit(style, one(q.limit));
      if (typeof limit !== 'number') return limit;
      const order = one(q.order) ?? 'desc';
      if (order !== 'asc' && order !== 'desc')
        return style.invalid(
          `Invalid 'order': expected one of asc, desc, but got '${order}' instead.`,
          'order',
          'invalid_value',
        );
      const after = one(q.after);
      const before = one(q.before);
      if (before !== undefined)
        return { query: { order: order === 'asc' ? 'desc' : 'asc', after: before, limit }, filters, reverse: true };
      return { query: { order, ...(after === undefined ? {} : { after }), limit }, filters, reverse: false };
    }
    case 'github': {
      // GitHub takes any per_page and page: more than 100 is 100, and what is not a number the default.
      const perText = numberOf(one(q.per_page));
      const perPage = perText === undefined || !Number.isInteger(perText) || perText < 1 ? 30 : Math.min(perText, 100);
      const pageText = numberOf(one(q.page));
      const page = pageText === undefined || !Number.isInteger(pageText) || pageText < 1 ? 1 : pageText;
      const snapshotText = numberOf(one(q.snapshot));
      const snapshot =
        snapshotText !== undefined && Number.isSafeInteger(snapshotText) && snapshotText >= 0
          ? snapshotText
          : undefined;
      const order = one(q.direction) === 'asc' ? 'asc' : 'desc';
      return {
        query: {
          order,
          skip: (page - 1) * perPage,
          limit: perPage,
          ...(snapshot === undefined ? {} : { maxSeq: snapshot }),
        },
        filters,
        pages: { snapshot, page, perPage },
        reverse: false,
      };
    }
    case 'rest': {
      const limitText = one(q.limit);
      let limit = 20;
      if (limitText !== undefined) {
        limit = /^\d+$/.test(limitText) ? Number(limitText) : NaN;
        if (!(limit >= 1 && limit <= 100))
          return style.invalid(`limit must be a whole number from 1 to 100, got ${JSON.stringify(limitText)}`, 'limit');
      }
      const cursor = one(q.cursor);
      return {
        query: { order: 'asc', ...(cursor === undefined ? {} : { after: cursor }), limit },
        filters,
        reverse: false,
      };
    }
  }
}

/** The answer to a cursor that names no object of the collection. */
export function unknownCursor(style: Style, plan: ListPlan, label: string): StyleAnswer {
  const cursor = plan.query.after ?? '';
  switch (style.name) {
    case 'stripe':
      return {
        status: 400,
        body: JSON.stringify({
          error: {
            code: 'resource_missing',
            message: `No such ${label}: '${cursor}'`,
            param: plan.reverse ? 'ending_before' : 'starting_after',
            type: 'invalid_request_error',
          },
        }),
      };
    case 'openai':
      return style.invalid(`No such ${label} object: ${cursor}`, plan.reverse ? 'before' : 'after');
    default:
      return style.invalid(`cursor ${JSON.stringify(cursor)} names no ${label}`, 'cursor');
  }
}

/** Whether a stored object passes the filters: each field's text equals the value (any of a list), ranges compare numbers. */
export function compileFilters(filters: Obj): ((object: StoredObject) => boolean) | undefined {
  const entries = Object.entries(filters);
  if (entries.length === 0) return undefined;
  const test = matcherOf(filters);
  return (object) => {
    let value: unknown;
    try {
      value = JSON.parse(object.text);
    } catch {
      return false;
    }
    return test(value);
  };
}

const RANGE: Readonly<Record<string, (a: number, b: number) => boolean>> = {
  gt: (a, b) => a > b,
  gte: (a, b) => a >= b,
  lt: (a, b) => a < b,
  lte: (a, b) => a <= b,
};

function matcherOf(spec: Obj): (value: unknown) => boolean {
  const tests = Object.entries(spec).map(([key, want]): ((value: unknown) => boolean) => {
    if (typeof want === 'string') return (v) => sameText(readOwn(v, key), want);
    if (Array.isArray(want)) return (v) => want.some((w) => typeof w === 'string' && sameText(readOwn(v, key), w));
    if (want !== null && typeof want === 'object') {
      const keys = Object.keys(want);
      if (keys.length > 0 && keys.every((k) => Object.hasOwn(RANGE, k))) {
        return (v) => {
          const n = numberOf(readOwn(v, key));
          return (
            n !== undefined &&
            keys.every((k) => {
              const bound = numberOf((want as Obj)[k]);
              return bound !== undefined && (RANGE[k] as (a: number, b: number) => boolean)(n, bound);
            })
          );
        };
      }
      const inner = matcherOf(want as Obj);
      return (v) => inner(readOwn(v, key));
    }
    return () => true;
  });
  return (value) => tests.every((test) => test(value));
}

function sameText(value: unknown, want: string): boolean {
  if (value === undefined) return false;
  return value === null ? want === 'null' : textOf(value) === want;
}

/** A query string as list parameters: brackets nest (`created[gte]=1`), a repeated name is a list, and so is `name[]=`. */
export function parseListQuery(text: string): Obj {
  const out: Obj = {};
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decodeFormPart(eq === -1 ? pair : pair.slice(0, eq));
    const value = decodeFormPart(eq === -1 ? '' : pair.slice(eq + 1));
    // (most names have no brackets: `limit`, `starting_after`)
    const keys = name.includes('[') ? (bracketKeys(name) ?? [name]) : undefined;
    if (keys === undefined ? FORBIDDEN_KEYS.has(name) : keys.some((key) => FORBIDDEN_KEYS.has(key)) || keys.length > 8)
      continue;
    // `name[]=` (`expand[]=a&expand[]=b`): each value goes into a list at `name`.
    const listed = keys !== undefined && keys.length > 1 && keys[keys.length - 1] === '';
    if (listed) keys.pop();
    let container: Obj = out;
    if (keys !== undefined)
      for (let i = 0; i < keys.length - 1; i++) {
        const key = keys[i] as string;
        const next = container[key];
        container = (
          next !== null && typeof next === 'object' && !Array.isArray(next) ? next : (container[key] = {})
        ) as Obj;
      }
    const last = keys === undefined ? name : (keys[keys.length - 1] as string);
    const had = container[last];
    if (had === undefined) container[last] = listed ? [value] : value;
    else container[last] = Array.isArray(had) ? [...had, value] : [had, value];
  }
  return out;
}

/** The list's JSON text in the style's shape (GitHub: the array alone). */
export function listBody(style: Style, page: Page, plan: ListPlan, urlPath: string): string {
  const items = plan.reverse ? [...page.items].reverse() : page.items;
  let data = '[';
  for (let i = 0; i < items.length; i++)
    data += i === 0 ? (items[i] as StoredObject).text : `,${(items[i] as StoredObject).text}`;
  data += ']';
  switch (style.name) {
    case 'stripe':
      return `{"object":"list","data":${data},"has_more":${page.hasMore},"url":${JSON.stringify(urlPath)}}`;
    case 'openai': {
      const first = items[0]?.id ?? null;
      const last = items[items.length - 1]?.id ?? null;
      return `{"object":"list","data":${data},"first_id":${JSON.stringify(first)},"last_id":${JSON.stringify(last)},"has_more":${page.hasMore}}`;
    }
    case 'github':
      return data;
    case 'rest':
      return `{"items":${data},"next":${page.hasMore && items.length > 0 ? JSON.stringify(items[items.length - 1]?.id) : 'null'}}`;
  }
}

/**
 * GitHub's `Link` header: `<url>; rel="prev", <url>; rel="next", <url>; rel="last", <url>; rel="first"`,
 * each that applies, in that order; none for a single page. The links keep the request's other
 * parameters and carry the snapshot, so every page is cut from the same objects.
 */
export function githubLink(
  input: ListInput,
  rawQuery: string,
  pages: NonNullable<ListPlan['pages']>,
  total: number,
  snapshot: number,
): string | undefined {
  const last = Math.max(1, Math.ceil(total / pages.perPage));
  if (last === 1 && pages.page === 1) return undefined;
  const kept = rawQuery.split('&').filter((pair) => pair !== '' && !/^(page|snapshot)(=|$)/.test(pair));
  const url = (page: number): string =>
    `<${input.origin}${input.urlPath}?${[...kept, `snapshot=${snapshot}`, `page=${page}`].join('&')}>`;
  const links: string[] = [];
  if (pages.page > 1) links.push(`${url(Math.min(pages.page - 1, last))}; rel="prev"`);
  if (pages.page < last) links.push(`${url(pages.page + 1)}; rel="next"`);
  if (pages.page < last) links.push(`${url(last)}; rel="last"`);
  if (pages.page > 1) links.push(`${url(1)}; rel="first"`);
  return links.length === 0 ? undefined : links.join(', ');
}
