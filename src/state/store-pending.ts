import { readFile, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from './atomic-write.js';
import { setStateAside, withStateFileLock } from './state-file.js';

/*
 * Requests a server admitted while its shared store (Redis) was unreachable (`limits.storeDown:
 * open`, or with no limit to decide) and could not add to it before it stopped. They are kept in a file beside the usage state
 * file and added to the store by the next server of the same store and project that reaches it, so
 * a stop while Redis is away loses no count. The file:
 * `{"version":1,"pending":[{"store":"redis://127.0.0.1:6379/0","project":"shop","month":"2026-11","requests":5}]}`
 * — `store` is the URL without its password, so the file holds no secret.
 */

/** Requests of one month, admitted while `store` was away, for the shared count of `project`. */
export interface PendingStoreCount {
  store: string;
  project: string;
  month: string;
  requests: number;
}

const VERSION = 1;

/** The pending file of a usage state file: `store-pending.json` in its folder (`.mockapi/` by default). */
export function storePendingFile(stateFile: string): string {
  return join(dirname(stateFile), 'store-pending.json');
}

/** The entries of the file's text, or why it is not a pending file. */
export function parseStorePending(text: string): PendingStoreCount[] | string {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return 'not valid JSON';
  }
  if (typeof data !== 'object' || data === null || (data as { version?: unknown }).version !== VERSION)
    return `not a version ${VERSION} object`;
  const pending = (data as { pending?: unknown }).pending;
  if (!Array.isArray(pending)) return '"pending" is not a list';
  const entries: PendingStoreCount[] = [];
  for (const item of pending as unknown[]) {
    const e = item as Partial<PendingStoreCount> | null;
    const ok =
      typeof e === 'object' &&
      e !== null &&
      typeof e.store === 'string' &&
      typeof e.project === 'string' &&
      typeof e.month === 'string' &&
      /^\d{4}-(0[1-9]|1[0-2])$/.test(e.month) &&
      Number.isSafeInteger(e.requests) &&
      (e.requests as number) > 0;
    if (!ok) return `an entry is not {store, project, month, requests}: ${JSON.stringify(item)}`;
    entries.push({ store: e.store!, project: e.project!, month: e.month!, requests: e.requests! });
  }
  return entries;
}

/** What reading the file found: its entries (none when it is missing), or why it cannot be used. */
type Read = { entries: PendingStoreCount[] } | { corrupt: string };

async function read(file: string): Promise<Read> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [] };
    throw err;
  }
  const parsed = parseStorePending(text);
  return typeof parsed === 'string' ? { corrupt: parsed } : { entries: parsed };
}

async function write(file: string, entries: PendingStoreCount[]): Promise<void> {
  if (entries.length === 0) {
    await unlink(file).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    return;
  }
  await writeFileAtomic(file, `${JSON.stringify({ version: VERSION, pending: entries })}\n`);
}

const isOf = (store: string, project: string) => (e: PendingStoreCount) => e.store === store && e.project === project;

/**
 * Takes the counts of `store` and `project` out of the file (under its lock), month → requests,
 * leaving other stores' and projects' entries. A file that is not a pending file is left as it is;
 * its reason is returned instead.
 */
export async function takeStorePending(
  file: string,
  store: string,
  project: string,
): Promise<Map<string, number> | { corrupt: string }> {
  // The usual case, without a lock, and without creating the folder: nothing was kept.
  if (
    !(await stat(file).then(
      () => true,
      () => false,
    ))
  )
    return new Map();
  return withStateFileLock(file, 'write', async () => {
    const found = await read(file);
    if ('corrupt' in found) return found;
    const mine = found.entries.filter(isOf(store, project));
    const counts = new Map<string, number>();
    if (mine.length === 0) return counts;
    for (const e of mine) counts.set(e.month, (counts.get(e.month) ?? 0) + e.requests);
    await write(
      file,
      found.entries.filter((e) => !isOf(store, project)(e)),
    );
    return counts;
  });
}

/** What the file keeps for `store` and `project`, month → requests, changing nothing (missing or not a pending file: none). */
export async function peekStorePending(file: string, store: string, project: string): Promise<Map<string, number>> {
  const found = await read(file).catch(() => ({ entries: [] as PendingStoreCount[] }));
  const counts = new Map<string, number>();
  if ('entries' in found)
    for (const e of found.entries.filter(isOf(store, project)))
      counts.set(e.month, (counts.get(e.month) ?? 0) + e.requests);
  return counts;
}

/**
 * Adds `counts` (month → requests) of `store` and `project` to the file (under its lock), beside
 * what other servers kept there. A file that is not a pending file is set aside first (renamed to
 * `<file>.corrupt-<time>`); returns where, when it was.
 */
export async function keepStorePending(
  file: string,
  store: string,
  project: string,
  counts: Map<string, number>,
  now: number,
): Promise<string | undefined> {
  return withStateFileLock(file, 'write', async () => {
    const found = await read(file);
    const aside = 'corrupt' in found ? await setStateAside(file, now) : undefined;
    const entries = 'corrupt' in found ? [] : found.entries;
    for (const [month, requests] of counts) {
      if (requests <= 0) continue;
      const same = entries.find((e) => isOf(store, project)(e) && e.month === month);
      if (same) same.requests += requests;
      else entries.push({ store, project, month, requests });
    }
    await write(file, entries);
    return aside;
  });
}
