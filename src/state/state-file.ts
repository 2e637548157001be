import { mkdir, readFile, rename, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { writeFileAtomic } from './atomic-write.js';
import { ensureMockapiDir, MOCKAPI_DIR } from './mockapi-dir.js';

/*
 * The usage state file (SPEC §5.4): where it lives, its format, and reading, writing and setting
 * it aside. The counter that keeps it, UsageStore, is in state.ts.
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
  const text = `${year}-${String(month + 1).padStart(2, '0')}`;
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

export type StateFileRead =
  | { status: 'ok'; usage: MonthlyUsage }
  | { status: 'missing' }
  | { status: 'corrupt'; reason: string }
  | { status: 'unreadable'; reason: string };

/** Reads a state file without changing anything. The usage returned may be of any month. */
export async function readStateFile(file: string): Promise<StateFileRead> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const error = err as NodeJS.ErrnoException;
    if (error.code === 'ENOENT') return { status: 'missing' };
    return { status: 'unreadable', reason: error.message };
  }
  const parsed = parseState(text);
  return typeof parsed === 'string' ? { status: 'corrupt', reason: parsed } : { status: 'ok', usage: parsed };
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
  if (data.version !== STATE_VERSION) return `expected "version": ${STATE_VERSION}, got ${JSON.stringify(data.version) ?? 'none'}`;
  const usage = data.usage;
  if (!isRecord(usage)) return '"usage" is not an object';
  if (typeof usage.month !== 'string' || !/^\d{4}-(0[1-9]|1[0-2])$/.test(usage.month)) return '"usage.month" is not a YYYY-MM month';
  if (!Number.isSafeInteger(usage.requests) || (usage.requests as number) < 0) return '"usage.requests" is not a non-negative integer';
  return { month: usage.month, requests: usage.requests as number };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function serializeState(usage: MonthlyUsage): string {
  return `${JSON.stringify({ version: STATE_VERSION, usage: { month: usage.month, requests: usage.requests } })}\n`;
}

/** Renames a corrupt state file to `<file>.corrupt-<UTC time>` (never over another file); returns the new path. */
export async function setStateAside(file: string, now: number): Promise<string> {
  const stamp = new Date(now).toISOString().replace(/[:.]/g, '-');
  let aside = `${file}.corrupt-${stamp}`;
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

/** Writes `usage` atomically, creating the folder first. */
export async function writeStateFile(file: string, usage: MonthlyUsage, write: WriteFn = writeFileAtomic): Promise<void> {
  await ensureStateDir(file);
  await write(file, serializeState(usage));
}
