import { bracketKeys, decodeFormPart, FORBIDDEN_KEYS } from './form.js';
import type { ListInput, ListPlan } from './list-plan.js';
import type { Page, StoredObject } from './store.js';
import type { Style } from './styles.js';

export { compileFilters } from './list-filter.js';
export { planList, unknownCursor, type ListInput, type ListPlan } from './list-plan.js';

/**
 * Lists in each style's shape and pages: stripe (`limit` 1–100, default 10, newest first,
 * `starting_after`, `ending_before`), openai (`limit` default 20, `order`, `after`, `before`),
 * github (a JSON array, `per_page` up to 100, `page`, and a `Link` header as GitHub writes it),
 * rest (`{"items","next"}`, oldest first, `limit`, `cursor`). Cursors are object ids, so a page
 * read later does not shift when objects are created between reads; GitHub's page numbers carry a
 * snapshot in their links for the same reason. Every other query parameter filters. Here: the query
 * read, the list's body and GitHub's Link header; the plan of a request in list-plan.ts, its
 * filters in list-filter.ts.
 */

type Obj = Record<string, unknown>;

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

/** The list's JSON text in the style's shape (GitHub: the array alone); `urlPath`, Stripe's `url`, is the collection's path. */
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
