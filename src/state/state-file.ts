import { mkdir, open, rename, stat, utimes } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { writeFileAtomic } from './atomic-write.js';
import { ensureMockapiDir, MOCKAPI_DIR } from './mockapi-dir.js';
import { acquireStateLock, withStateLock } from './state-lock.js';

/*
 * The usage state file: where it lives, its format, and reading, writing and setting
 * it aside. The counter that keeps it, UsageStore, is in state.ts.
 *
 * The file's modification time has a meaning: it is when this month's count was last *set* —
 * the start of the month, a `mockapi usage --reset`, or an edit — and not when a server last
 * added its requests to it: servers sharing the file keep the time they found. That is how a
 * server tells another server's additions (the time is the one it saw last: add its own count
 * on top) from a reset or an edit (a new time: requests it admitted before it no longer count).
 * The JSON itself stays exactly as the documented format shows it.
 */

/** This month's usage as stored: `{"version":1,"usage":{"month":"2026-11","requests":42}}`. */
export interface MonthlyUsage {
  /** Calendar month in UTC, `YYYY-MM`. */
  month: string;
  requests: number;
}

export const STATE_VERSION = 1;

// The last month computed and its bounds: the quota asks for the month of every request, and a
// Date plus a formatted string each time is most of what counting a request costs.
let lastMonth = '';
let lastMonthStart = 0;
let lastMonthEnd = 0;

/** The calendar month (UTC) that `now` falls in, as `YYYY-MM`. */
export function monthOf(now: number): string {
  if (now >= lastMonthStart && now < lastMonthEnd) return lastMonth;
  const date = new Date(now);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  const text = `${String(year).padStart(4, '0')}-${String(month + 1).padStart(2, '0')}`;
  if (Number.isFinite(now)) {
    lastMonth = text;
    lastMonthStart = utcMonthStart(year, month);
    lastMonthEnd = utcMonthStart(year, month + 1);
  }
  return text;
}

/** Midnight UTC on the first of the month, for any year (Date.UTC maps years 0–99 to 1900–1999). */
function utcMonthStart(year: number, month: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month, 1);
  return date.getTime();
}

/**
 * Where usage is kept, from the `--state <file>` / `--no-state` flags: a given file (relative to
 * the working directory, like any CLI path), `.mockapi/state.json` beside the config by default,
 * or `undefined` for memory only.
 */
export function resolveStateFile(configDir: string, state: string | false | undefined): string | undefined {
  if (state === false) return undefined;
  if (state !== undefined) return resolve(state);
  return join(configDir, MOCKAPI_DIR, 'state.json');
}

/** Midnight UTC on the first day of `month` (`YYYY-MM`): the time a new month's count is set to 0. */
export function monthStartOf(month: string): number {
  return utcMonthStart(Number(month.slice(0, 4)), Number(month.slice(5, 7)) - 1);
}

export type StateFileRead =
  /** `setAt`: the file's modification time, when its count was last set (see above). */
  | { status: 'ok'; usage: MonthlyUsage; setAt: number }
  | { status: 'missing' }
  | { status: 'corrupt'; reason: string }
  | { status: 'unreadable'; reason: string };

/** Reads a state file without changing anything. The usage returned may be of any month. */
export async function readStateFile(file: string): Promise<StateFileRead> {
  let text: string;
  let setAt: number;
  try {
    // One open file for both: the bytes and the time of the same version, even if it is replaced meanwhile.
    const handle = await open(file, 'r');
    try {
      setAt = Math.floor((await handle.stat()).mtimeMs); // whole ms: what `writeStateFile` sets
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    const error = err as NodeJS.ErrnoException;
    if (error.code === 'ENOENT') return { status: 'missing' };
    return { status: 'unreadable', reason: error.message };
  }
  const parsed = parseState(text);
  return typeof parsed === 'string' ? { status: 'corrupt', reason: parsed } : { status: 'ok', usage: parsed, setAt };
}

/** The usage in a state file's text, or why it is not a valid state file. */
export function parseState(text: string): MonthlyUsage | string {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return 'not valid JSON';
  }
  if (!isRecord(data)) return 'not a JSON object';
  if (data.version !== STATE_VERSION)
    return `expected "version": ${STATE_VERSION}, got ${JSON.stringify(data.version) ?? 'none'}`;
  const usage = data.usage;
  if (!isRecord(usage)) return '"usage" is not an object';
  if (typeof usage.month !== 'string' || !/^\d{4}-(0[1-9]|1[0-2])$/.test(usage.month))
    return '"usage.month" is not a YYYY-MM month';
  if (!Number.isSafeInteger(usage.requests) || (usage.requests as number) < 0)
    return '"usage.requests" is not a non-negative integer';
  return { month: usage.month, requests: usage.requests as number };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function serializeState(usage: MonthlyUsage): string {
  return `${JSON.stringify({ version: STATE_VERSION, usage: { month: usage.month, requests: usage.requests } })}\n`;
}

/**
 * Renames a state file to `<file>.<kind>-<UTC time>` (never over another file); returns the new
 * path. `corrupt`: a file that is not a state file; `later-month`: one that holds a month later than
 * the server's clock (left by a server run with a future `--clock`), kept instead of written over.
 */
export async function setStateAside(
  file: string,
  now: number,
  kind: 'corrupt' | 'later-month' = 'corrupt',
): Promise<string> {
  const stamp = new Date(now).toISOString().replace(/[:.]/g, '-');
  let aside = `${file}.${kind}-${stamp}`;
  for (let n = 1; await exists(aside); n++) aside = `${file}.corrupt-${stamp}-${n}`;
  await rename(file, aside);
  return aside;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

export type WriteFn = (file: string, data: string) => Promise<void>;

/** Creates the state file's folder if needed (`.mockapi/` with its `.gitignore`). */
export async function ensureStateDir(file: string): Promise<void> {
  const dir = dirname(file);
  if (basename(dir) === MOCKAPI_DIR) await ensureMockapiDir(dirname(dir));
  else await mkdir(dir, { recursive: true });
}

/**
 * Writes `usage` atomically, creating the folder first, and gives the file the modification time
 * `setAt` when one is given. Returns the time the file then has, as a later read sees it (a file
 * system may round it), or undefined when it cannot be read back.
 */
export async function writeStateFile(
  file: string,
  usage: MonthlyUsage,
  write: WriteFn = writeFileAtomic,
  setAt?: number,
): Promise<number | undefined> {
  await ensureStateDir(file);
  await write(file, serializeState(usage));
  if (setAt === undefined) return undefined;
  // Seconds as a float lose a little: half a millisecond more makes the time read back floor to `setAt`.
  await utimes(file, Date.now() / 1000, (setAt + 0.5) / 1000).catch(() => {});
  // What a reader sees, whether or not the time could be set (a replaced `write` in tests may not create the file).
  return stat(file).then(
    (s) => Math.floor(s.mtimeMs),
    () => undefined,
  );
}

/** What `resetStateFile` found before it wrote the 0, and where a corrupt file was moved. */
export interface StateReset {
  before: StateFileRead;
  aside?: string;
}

/**
 * `mockapi usage --reset`: sets the month of `now` to 0, under the file's lock, with a new
 * modification time so that every server sharing the file drops what it admitted before `now` and
 * has not written yet. A corrupt file, or one of a later month, is set aside first; an unreadable
 * one is left alone (and returned as such).
 */
export async function resetStateFile(file: string, now: number): Promise<StateReset> {
  await ensureStateDir(file);
  return withStateLock(file, async () => {
    const before = await readStateFile(file);
    if (before.status === 'unreadable') return { before };
    // A later month's count (a future `--clock`) is kept aside, not written over, as a server does.
    const later = before.status === 'ok' && before.usage.month > monthOf(now);
    const aside =
      before.status === 'corrupt'
        ? await setStateAside(file, now)
        : later
          ? await setStateAside(file, now, 'later-month')
          : undefined;
    const previous = before.status === 'ok' ? before.setAt : undefined;
    // The new time must differ from the one servers saw, also where the file system keeps whole seconds.
    let setAt = Math.max(now, Math.floor(previous ?? -Infinity) + 1);
    for (let tries = 0; tries < 3; tries++) {
      const actual = await writeStateFile(file, { month: monthOf(now), requests: 0 }, writeFileAtomic, setAt);
      if (actual === undefined || actual !== previous) break;
      setAt += 1000;
    }
    return { before, aside };
  });
}

/**
 * Runs `work` holding the state file's lock. To write, the folder is created first and `work` does
 * not run without the lock. To read, `work` runs without it when it cannot be had: no folder means
 * no file (and reading never creates `.mockapi/`); a lock held too long must not stop a server from
 * starting or seeing a reset.
 */
export async function withStateFileLock<T>(target: string, mode: 'read' | 'write', work: () => Promise<T>): Promise<T> {
  if (mode === 'write') await ensureStateDir(target);
  let release: (() => Promise<void>) | undefined;
  try {
    release = await acquireStateLock(target);
  } catch (err) {
    if (mode === 'write') throw err;
  }
  try {
    return await work();
  } finally {
    await release?.();
  }
}

/**
 * The state file of a key of `keys:`, beside `file` (the one of `apiKey`, the key named `default`):
 * `.mockapi/state.json` → `.mockapi/state.key-ci.json`. Each key's file has the format above, so
 * every guarantee of the state file (several servers, reset, corrupt files set aside) holds per key.
 */
export function keyStateFile(file: string, keyName: string): string {
  const slash = Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\'));
  const dot = file.lastIndexOf('.');
  return dot > slash + 1 ? `${file.slice(0, dot)}.key-${keyName}${file.slice(dot)}` : `${file}.key-${keyName}`;
}
