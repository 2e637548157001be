import type { RawEntry } from './journal-entry.js';
import { matchesFilter, type Journal, type RequestFilter } from './journal.js';

const FIELDS = ['method', 'path', 'status', 'endpoint', 'step'] as const;
const SHOWN = 3;
const LOOKED_AT = 500;

/** `method=POST, path=/mock/orders`: the filter as a wait's timeout names it. */
export function describeFilter(filter: RequestFilter): string {
  const parts = [...FIELDS, 'since' as const]
    .filter((name) => filter[name] !== undefined)
    .map((name) => `${name}=${String(filter[name])}`);
  return parts.length === 0 ? 'any request' : parts.join(', ');
}

/**
 * What a wait that ran out of time saw instead: the journaled requests (after `since`) that came
 * closest to the filter — most filter fields matched, then newest — each with the fields that differ.
 */
export function closestMisses(journal: Journal, filter: RequestFilter): string {
  const asked = FIELDS.filter((name) => filter[name] !== undefined);
  const seen = journal.list({ since: filter.since, limit: LOOKED_AT });
  if (seen.length === 0) return 'no request arrived at all';
  const scored = seen
    .map((entry, order) => ({
      entry,
      order,
      differ: asked.filter((name) => !matchesFilter(entry, { [name]: filter[name] })),
    }))
    .filter(({ differ }) => differ.length > 0); // the matching ones are in the answer already
  if (scored.length === 0) return 'no other request arrived';
  scored.sort((a, b) => a.differ.length - b.differ.length || b.order - a.order);
  const shown = scored
    .slice(0, SHOWN)
    .map(({ entry, differ }) => `${describe(entry)}: ${differ.join(', ')} differ${differ.length === 1 ? 's' : ''}`);
  return `closest requests seen: ${shown.join('; ')}`;
}

function describe(entry: RawEntry): string {
  const q = entry.url.indexOf('?');
  return `#${entry.id} ${entry.method} ${q === -1 ? entry.url : entry.url.slice(0, q)} → ${entry.status} (${entry.step}${entry.endpoint === null ? '' : `, ${entry.endpoint}`})`;
}
