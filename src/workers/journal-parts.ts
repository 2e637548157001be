import type { HeldPart, JournalPart } from './hub-messages.js';
import { viewEntry, type JournalEntry, type RawEntry } from '../control/journal-entry.js';
import { matchesFilter, type Journal, type RequestFilter } from '../control/journal.js';

/**
 * The journal of a `serve --workers` server is every worker's own, merged when asked:
 * each worker answers its part ({@link journalPart}), the worker that took the admin call merges
 * them ({@link mergeParts}) in id order — ids being the moment each answer was given (ids.ts).
 */

/** This worker's part of a query: entries with ids below `cutoff` only (see `WorkerIds.cutoff`). */
export function journalPart(
  journal: Journal,
  filter: RequestFilter,
  cutoff: number,
  withEntries: boolean,
): JournalPart {
  const kept: number[] = [];
  const matched: number[] = [];
  const found: RawEntry[] = [];
  const matching = { ...filter, limit: undefined };
  const since = filter.since ?? -Infinity;
  for (const entry of journal.list({})) {
    if (entry.id >= cutoff || entry.id <= since) continue;
    kept.push(entry.id);
    if (!matchesFilter(entry, matching)) continue;
    matched.push(entry.id);
    if (withEntries) found.push(entry);
  }
  const last = filter.limit === undefined ? found : found.slice(Math.max(0, found.length - filter.limit));
  return { kept, matched, entries: withEntries ? last.map(viewEntry) : undefined };
}

/**
 * Every worker's part as one journal of `capacity` entries: the newest `capacity` of all the entries
 * kept, of which the matching ones, oldest first (the last `limit`), and how many match. The parts
 * hold the ids above `since` only: when there are more than `capacity` of those, the oldest of them
 * fell out of the server's journal; when not, every one of them is in it.
 */
export function mergeParts(
  parts: readonly JournalPart[],
  filter: RequestFilter,
  capacity: number,
): { entries: JournalEntry[]; count: number } {
  let floor = -Infinity;
  const kept = parts.flatMap((part) => part.kept);
  if (kept.length > capacity) floor = capacity === 0 ? Infinity : kept.sort((a, b) => a - b)[kept.length - capacity]!;
  let count = 0;
  for (const part of parts) for (const id of part.matched) if (id >= floor) count++;
  const entries = parts
    .flatMap((part) => part.entries ?? [])
    .filter((entry) => entry.id >= floor)
    .sort((a, b) => a.id - b.id);
  return {
    entries:
      filter.limit === undefined || entries.length <= filter.limit
        ? entries
        : entries.slice(entries.length - filter.limit),
    count,
  };
}

/** This worker's answer to a watch: its matching entries and the last id it gave. */
export function heldPart(journal: Journal, filter: RequestFilter | undefined, last: number): HeldPart {
  return { entries: filter === undefined ? [] : journal.list({ ...filter, limit: undefined }).map(viewEntry), last };
}
