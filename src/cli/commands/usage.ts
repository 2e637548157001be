import { formatIssue, loadConfig } from '../../config/load.js';
import { DEFAULT_KEY_NAME, type Config } from '../../config/types.js';
import { systemClock, type Clock } from '../../clock.js';
import { nextMonthStart } from '../../pipeline/quota.js';
import { monthOf, readStateFile, resolveStateFile, resetStateFile, type MonthlyUsage } from '../../state/state-file.js';
import { storePendingFile } from '../../state/store-pending.js';
import { listServers } from '../../state/registry.js';
import { EXIT_FAILURE, EXIT_OK, type CommandIO } from './io.js';
import { rateWindowLine } from './usage-window.js';
import { keysFromFiles, showKeys, type KeyUsageLine } from './usage-keys.js';
import { serverMeters, showMeters, type MetersByKey } from './usage-meters.js';
import { liveAtLeast, liveCounts, type LiveCounts } from './usage-live.js';

export interface UsageOptions {
  /** Path of the config file. */
  config: string;
  /** `--state <file>`, `false` for `--no-state`, `undefined` for `.mockapi/state.json` beside the config. */
  state?: string | false;
  json?: boolean;
  reset?: boolean;
  /** `--store <url>`: read and reset the shared month in Redis instead (default: the config's `limits.store`). */
  store?: string;
  /** `--session <id>`: that session's usage, from the newest running server (see usage-session.ts). */
  session?: string;
}

/** The `--json` output: one object on one line. */
export interface UsageReport {
  month: string;
  requests: number;
  /** `limits.monthlyQuota`, or null without a quota. */
  quota: number | null;
  /** Requests left this month (never below 0), or null without a quota. */
  remaining: number | null;
  /** The state file, or null with `--no-state`. */
  state: string | null;
  /** Every key's figures by name (`default` is `apiKey`'s, the fields above), each with its `plan`; only when the config lists `keys:`. */
  keys?: Record<string, KeyUsageLine>;
  /** Every meter of every key (by key name, then meter name), when some limits have meters and a server (or the store) holds them. */
  meters?: MetersByKey;
}

/**
 * `mockapi usage`: shows this month's quota usage from the state file — or, higher, as the running
 * servers of the config count it now (they write the file at most once a second) — and the rate
 * window of the running server when a rate limit is configured; or zeroes the month with `--reset`.
 *
 * A running `mockapi serve` takes a reset at once: it watches the state file, and re-reads it before
 * each write of its own count. One started with `--no-watch` takes it at its next write or when it
 * next refuses a request over the quota; `--reset` says so when such a server of this config runs.
 */
export async function runUsage(opts: UsageOptions, io: CommandIO, clock: Clock = systemClock): Promise<number> {
  const loaded = await loadConfig(opts.config);
  if (!loaded.ok) {
    for (const issue of loaded.issues) io.err(formatIssue(issue));
    return EXIT_FAILURE;
  }
  const { config } = loaded;
  if (opts.session !== undefined)
    return (await import('./usage-session.js')).runSessionUsage(config, { ...opts, session: opts.session }, io);
  const store = opts.store ?? config.limits.store ?? (config.fleet?.url || undefined);
  if (store !== undefined) {
    const state = resolveStateFile(config.dir, opts.state);
    return (await import('./usage-shared.js')).runSharedUsage(
      store,
      config,
      opts,
      io,
      state === undefined ? undefined : storePendingFile(state),
    );
  }
  const now = clock();
  const file = resolveStateFile(config.dir, opts.state);
  const quota = config.limits.monthlyQuota;

  // A running server's count is ahead of the file it writes at most once a second: read it live,
  // unless a state file of the user's choosing (`--state`) is asked about.
  const live = opts.reset || typeof opts.state === 'string' ? undefined : await liveCounts(config, monthOf(now));

  if (file === undefined) {
    io.err(
      `--no-state: usage is kept in the memory of a running server only; nothing is persisted${opts.reset ? ' to reset' : ''}`,
    );
    const r = report({ month: monthOf(now), requests: 0 }, quota, null);
    const meters = await serverMeters(config, opts.reset === true);
    show(io, opts.json, withMeters(withLive(await withKeys(config, undefined, now, false, io, r), live), meters), now);
    if (!opts.json && !opts.reset) await showWindow(io, config);
    if (!opts.json) showMeters(io, meters, config);
    return EXIT_OK;
  }

  if (opts.reset) return reset(file, config, quota, opts.json, io, now);
  const read = await readStateFile(file);
  if (read.status === 'unreadable') {
    io.err(`cannot read usage state ${file}: ${read.reason}`);
    return EXIT_FAILURE;
  }

  if (read.status === 'corrupt') {
    io.err(`usage state ${file} is corrupt (${read.reason})`);
    io.err('mockapi serve moves it aside and starts at 0 when it next starts; mockapi usage --reset does the same now');
    return EXIT_FAILURE;
  }
  const usage =
    read.status === 'ok' && read.usage.month === monthOf(now) ? read.usage : { month: monthOf(now), requests: 0 };
  if (read.status === 'ok' && read.usage.month > monthOf(now)) {
    io.err(
      `${laterMonth(file, read.usage, monthOf(now))}; mockapi serve moves it aside when it next starts, and counts ${monthOf(now)} from 0`,
    );
  }
  if (read.status === 'missing' && !opts.json && live === undefined)
    io.err(`no usage state at ${file} yet: nothing was counted`);
  const meters = await serverMeters(config, false);
  show(
    io,
    opts.json,
    withMeters(withLive(await withKeys(config, file, now, false, io, report(usage, quota, file)), live), meters),
    now,
  );
  if (!opts.json) await showWindow(io, config);
  if (!opts.json) showMeters(io, meters, config);
  return EXIT_OK;
}

/** The rate limit's line, after the month's (see {@link rateWindowLine}). */
async function showWindow(io: CommandIO, config: Config): Promise<void> {
  const line = await rateWindowLine(config);
  if (line !== undefined) io.out(line);
}

/** Zeroes the month under the file's lock: every server sharing the file drops what it admitted before and has not written. */
async function reset(
  file: string,
  config: Config,
  quota: number | undefined,
  json: boolean | undefined,
  io: CommandIO,
  now: number,
): Promise<number> {
  const month = monthOf(now);
  let read;
  try {
    const done = await resetStateFile(file, now);
    read = done.before;
    if (read.status === 'corrupt')
      io.err(`usage state ${file} was corrupt (${read.reason}); moved it to ${done.aside}`);
    else if (done.aside !== undefined && read.status === 'ok')
      io.err(`${laterMonth(file, read.usage, month)}; moved it to ${done.aside}`);
  } catch (err) {
    io.err(`cannot reset usage state ${file}: ${(err as Error).message}`);
    return EXIT_FAILURE;
  }
  if (read.status === 'unreadable') {
    io.err(`cannot read usage state ${file}: ${read.reason}`);
    return EXIT_FAILURE;
  }
  const before = read.status === 'ok' && read.usage.month === month ? read.usage.requests : 0;
  // Servers of this config started with --no-watch (a server with another --state is not affected,
  // but the registry does not say which state file a server uses).
  const configFile = config.file;
  const keys = await keysFromFiles(config, file, now, true, io, {
    ...report({ month, requests: 0 }, quota, file),
    plan: null,
  });
  const unwatched =
    configFile === undefined ? [] : (await listServers(configFile).catch(() => [])).filter((server) => !server.watch);
  for (const server of unwatched) {
    io.err(
      `note: the mockapi serve at ${server.url} runs with --no-watch: it takes the reset at its next write, or when it next refuses a request over the quota`,
    );
  }
  // Meters live in the running server's memory: it empties them.
  const meters = await serverMeters(config, true);
  if (json)
    io.out(
      JSON.stringify(
        withMeters({ ...report({ month, requests: 0 }, quota, file), ...(keys === undefined ? {} : { keys }) }, meters),
      ),
    );
  else {
    io.out(
      `Usage for ${month} reset to 0 (was ${before}) in ${file}${keys === undefined ? '' : `, and for ${plural(Object.keys(keys).length - 1, 'more key')}`}`,
    );
    if (meters !== undefined)
      io.out(
        meters === 'none'
          ? 'meters: no server of this config runs; a server starts its meters at 0'
          : 'meters: emptied in the running server',
      );
  }
  return EXIT_OK;
}

/** A state file of a month after this one: left by a server run with a future `--clock`. */
function laterMonth(file: string, usage: MonthlyUsage, month: string): string {
  return `usage state ${file} holds ${usage.month} (${usage.requests} requests), a later month than now (${month})`;
}

function report(usage: MonthlyUsage, quota: number | undefined, state: string | null): UsageReport {
  return {
    month: usage.month,
    requests: usage.requests,
    quota: quota ?? null,
    remaining: quota === undefined ? null : Math.max(0, quota - usage.requests),
    state,
  };
}

/** `r` with each count raised to what the running servers counted (see liveCounts). */
function withLive(r: UsageReport, live: LiveCounts | undefined): UsageReport {
  if (live === undefined) return r;
  const raised = <T extends { requests: number; quota: number | null; remaining: number | null }>(
    figures: T,
    n: number | undefined,
  ): T => {
    const requests = liveAtLeast(figures.requests, n);
    return { ...figures, requests, remaining: figures.quota === null ? null : Math.max(0, figures.quota - requests) };
  };
  const top = raised(r, live.requests);
  if (r.keys === undefined) return top;
  const keys = Object.fromEntries(
    Object.entries(r.keys).map(([name, k]) => [
      name,
      name === DEFAULT_KEY_NAME ? raised(k, live.requests) : raised(k, live.keys[name]),
    ]),
  );
  return { ...top, keys };
}

/** `r` with the figures of every key of `keys:` (see keysFromFiles), when the config lists any. */
async function withKeys(
  config: Config,
  file: string | undefined,
  now: number,
  reset: boolean,
  io: CommandIO,
  r: UsageReport,
): Promise<UsageReport> {
  const keys = await keysFromFiles(config, file, now, reset, io, { ...r, plan: null });
  return keys === undefined ? r : { ...r, keys };
}

/** `r` with the meters, when a server (or the store) gave them. */
function withMeters(r: UsageReport, meters: MetersByKey | 'none' | undefined): UsageReport {
  return meters === undefined || meters === 'none' ? r : { ...r, meters };
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function show(io: CommandIO, json: boolean | undefined, r: UsageReport, now: number): void {
  if (json) {
    io.out(JSON.stringify(r));
    return;
  }
  showMonth(io, r, now);
  if (r.keys !== undefined) showKeys(io, r.keys);
}

function showMonth(io: CommandIO, r: UsageReport, now: number): void {
  io.out(`${r.month} (UTC): ${r.requests} ${r.requests === 1 ? 'request' : 'requests'}`);
  if (r.quota === null || r.remaining === null) {
    io.out('quota: none (limits.monthlyQuota is not set)');
    return;
  }
  io.out(`quota: ${r.quota} a month, ${r.remaining} remaining`);
  if (r.remaining === 0) {
    const resumes = new Date(nextMonthStart(now)).toISOString().slice(0, 10);
    io.out(`quota used up: requests get 429 until ${resumes} 00:00 UTC`);
  }
}
