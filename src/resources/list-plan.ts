/**
 * How a list request pages in each style: its paging parameters read into a plan (what to ask the
 * store, how to write the answer) or the style's 400, the other parameters kept as filters, and the
 * answer to a cursor that names no object.
 */
import { numberOf } from '../expression/values.js';
import type { ResourceStyle } from './model.js';
import type { PageQuery } from './store.js';
import type { Style, StyleAnswer } from './styles.js';

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
    case 'stripe':
      return planStripe(style, q, filters);
    case 'openai':
      return planOpenai(style, q, filters);
    case 'github':
      return planGithub(q, filters);
    case 'rest':
      return planRest(style, q, filters);
  }
}

/** Stripe's paging: `limit` 1–100 (default 10), newest first, `starting_after` or `ending_before`. */
function planStripe(style: Style, q: Readonly<Obj>, filters: Obj): Planned {
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

/** OpenAI's paging: `limit` 1–100 (default 20), `order` (default desc), `after`, `before`. */
function planOpenai(style: Style, q: Readonly<Obj>, filters: Obj): Planned {
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

/** GitHub's paging: any `per_page` (at most 100) and `page`, `direction`, and the `snapshot` its links carry. */
function planGithub(q: Readonly<Obj>, filters: Obj): Planned {
  // GitHub takes any per_page and page: more than 100 is 100, and what is not a number the default.
  const perText = numberOf(one(q.per_page));
  const perPage = perText === undefined || !Number.isInteger(perText) || perText < 1 ? 30 : Math.min(perText, 100);
  const pageText = numberOf(one(q.page));
  const page = pageText === undefined || !Number.isInteger(pageText) || pageText < 1 ? 1 : pageText;
  const snapshotText = numberOf(one(q.snapshot));
  const snapshot =
    snapshotText !== undefined && Number.isSafeInteger(snapshotText) && snapshotText >= 0 ? snapshotText : undefined;
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

/** rest's paging: `limit` 1–100 (default 20), oldest first, `cursor`. */
function planRest(style: Style, q: Readonly<Obj>, filters: Obj): Planned {
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
