import type { RawEntry } from './journal-entry.js';
import { matchesFilter, type Journal, type RequestFilter } from './journal.js';

const FIELDS = ['method', 'path', 'status', 'endpoint', 'step'] as const;
const SHOWN = 3;
const LOOKED_AT = 500;

/** `a=1, b=2`: a wait's filter as its timeout names it (`fields` in their order, then `since`); `any` when it has none. */
export function describeWaitFilter<F extends object>(
  filter: F,
  fields: readonly (keyof F & string)[],
  any: string,
): string {
  const parts = fields.filter((name) => filter[name] !== undefined).map((name) => `${name}=${String(filter[name])}`);
  return parts.length === 0 ? any : parts.join(', ');
}

/**
 * What a wait that ran out of time saw instead: of `seen` (oldest first), those that came closest
 * to its filter — most of the `asked` fields matched, then newest — each with the fields that
 * differ; or that nothing (`words.none`) or nothing else (`words.noOther`) came. Requests and
 * webhook deliveries alike.
 */
export function closestSeen<T>(
  seen: readonly T[],
  asked: readonly string[],
  matches: (item: T, field: string) => boolean,
  describe: (item: T) => string,
  words: { readonly none: string; readonly noOther: string; readonly plural: string },
): string {
  if (seen.length === 0) return words.none;
  const scored = seen
    .map((item, order) => ({ item, order, differ: asked.filter((name) => !matches(item, name)) }))
    .filter(({ differ }) => differ.length > 0); // the matching ones are in the answer already
  if (scored.length === 0) return words.noOther;
  scored.sort((a, b) => a.differ.length - b.differ.length || b.order - a.order);
  const shown = scored
    .slice(0, SHOWN)
    .map(({ item, differ }) => `${describe(item)}: ${differ.join(', ')} differ${differ.length === 1 ? 's' : ''}`);
  return `closest ${words.plural} seen: ${shown.join('; ')}`;
}

/** `method=POST, path=/mock/orders`: the filter as a wait's timeout names it. */
export function describeFilter(filter: RequestFilter): string {
  return describeWaitFilter(filter, [...FIELDS, 'since'], 'any request');
}

/**
 * What a wait that ran out of time saw instead: the journaled requests (after `since`) that came
 * closest to the filter — most filter fields matched, then newest — each with the fields that differ.
 */
export function closestMisses(journal: Journal, filter: RequestFilter): string {
  return closestSeen(
    journal.list({ since: filter.since, limit: LOOKED_AT }),
    FIELDS.filter((name) => filter[name] !== undefined),
    (entry, name) => matchesFilter(entry, { [name]: filter[name as keyof RequestFilter] }),
    describe,
    { none: 'no request arrived at all', noOther: 'no other request arrived', plural: 'requests' },
  );
}

function describe(entry: RawEntry): string {
  const q = entry.url.indexOf('?');
  return `#${entry.id} ${entry.method} ${q === -1 ? entry.url : entry.url.slice(0, q)} → ${entry.status} (${entry.step}${entry.endpoint === null ? '' : `, ${entry.endpoint}`})`;
}
