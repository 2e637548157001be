/**
 * Which journal entries a query, a count or a wait is about: the filter read from the query
 * parameters, and the test of one entry against it (a futile retry is known by its note).
 */
import type { JournalNote, RawEntry, Step } from './journal-entry.js';

/** Which requests a query, a count or a wait is about (query parameters). */
export interface RequestFilter {
  /** Any case. */
  method?: string;
  /** The path as sent, with `/mock`; a trailing `*` matches any rest. */
  path?: string;
  status?: number;
  /** `"GET /users/:id"`. */
  endpoint?: string;
  step?: Step;
  /** Only entries with an `id` above this. */
  since?: number;
  /** Only the last `limit` matching entries. */
  limit?: number;
  /** true: only requests that broke the OpenAPI description; false: only those that did not. */
  violations?: boolean;
  /** Only requests noted as a futile retry (true), or only the others (false). */
  futile?: boolean;
}

/** Whether `entry` is one `filter` asks about (`limit` aside). */
export function matchesFilter(entry: RawEntry, filter: RequestFilter): boolean {
  if (filter.since !== undefined && entry.id <= filter.since) return false;
  if (filter.status !== undefined && entry.status !== filter.status) return false;
  if (filter.step !== undefined && entry.step !== filter.step) return false;
  if (filter.violations !== undefined && (entry.violations?.length ?? 0) > 0 !== filter.violations) return false;
  if (filter.futile !== undefined && isFutile(entry) !== filter.futile) return false;
  if (filter.endpoint !== undefined && entry.endpoint !== filter.endpoint) return false;
  if (filter.method !== undefined && entry.method.toUpperCase() !== filter.method.toUpperCase()) return false;
  if (filter.path !== undefined) {
    const q = entry.url.indexOf('?');
    const path = q === -1 ? entry.url : entry.url.slice(0, q);
    if (filter.path.endsWith('*') ? !path.startsWith(filter.path.slice(0, -1)) : path !== filter.path) return false;
  }
  return true;
}

/** Whether an entry was noted as a futile retry (a request repeated after a spent budget refused it). */
export function isFutile(entry: { note: JournalNote }): boolean {
  const { note } = entry;
  if (note === undefined) return false;
  return typeof note === 'string' ? note.includes('futile retry (') : note.some((n) => n.includes('futile retry ('));
}
