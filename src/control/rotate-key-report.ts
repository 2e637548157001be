import { confirmServers, fetchHealthRevision, type ConfirmResult } from '../state/confirm-servers.js';
import { listServers, type ServerEntry } from '../state/registry.js';
import { describeFsError } from '../describe-fs-error.js';

/** How long to wait for running servers to confirm, in total, unless told; and between two health polls of one server. */
const DEFAULT_TIMEOUT_MS = 5000;
const DEFAULT_POLL_MS = 20;

export interface WaitOptions {
  timeoutMs?: number;
  pollIntervalMs?: number;
  fetchRevision?: (url: string) => Promise<string | undefined>;
  /** Whether a served revision carries the new key (asked again for one it refused). */
  carriesNewKey: (revision: string) => Promise<boolean>;
  /** True stops every wait early: the file lost the new key. */
  isStale: () => boolean;
}

/** What the running servers of the file said: each one, and whether its health answer confirmed the new key. */
export type LocalWait =
  | { listed: false; error: string }
  | { listed: true; servers: ServerEntry[]; results: ConfirmResult[]; timeoutMs: number };

/**
 * Servers that confirmed the new key another way than by reloading the file they watch: the hosts
 * of a fleet, each told through the fleet's store (a host started with `--no-watch` among them), and
 * the lines that say so, printed after this machine's.
 */
export interface ConfirmedElsewhere {
  confirms(server: ServerEntry): boolean;
  lines: string[];
}

/** Waits until each running server of `file` that watches it serves a revision that carries the new key. */
export async function waitForServers(file: string, opts: WaitOptions): Promise<LocalWait> {
  let servers: ServerEntry[];
  try {
    servers = await listServers(file);
  } catch (err) {
    return { listed: false, error: describeFsError(err) };
  }
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const results = await confirmServers(
    servers.filter((s) => s.watch),
    {
      timeoutMs,
      pollIntervalMs: opts.pollIntervalMs ?? DEFAULT_POLL_MS,
      fetchRevision: opts.fetchRevision ?? fetchHealthRevision,
      carriesNewKey: opts.carriesNewKey,
      isStale: opts.isStale,
    },
  );
  return { listed: true, servers, results, timeoutMs };
}

/**
 * The lines that say how the rotation went on the running servers of the file: how many confirmed,
 * then each that did not, then `elsewhere`'s lines. A server `elsewhere` confirms is counted as
 * confirmed and never warned about: with `--no-watch` it does not reload the file, yet it serves
 * the new key all the same.
 */
export function reportLines(wait: LocalWait, shown: string, label: string, elsewhere?: ConfirmedElsewhere): string[] {
  const tail = elsewhere?.lines ?? [];
  if (!wait.listed)
    return [
      `rotated ${label} in ${shown}`,
      `warning: could not list running servers (${wait.error}); a running mockapi serve may still accept the old key`,
      ...tail,
    ];
  const { servers, results, timeoutMs } = wait;
  const told = (s: ServerEntry): boolean => elsewhere?.confirms(s) === true;
  const byHealth = new Set(results.filter((r) => r.confirmed).map((r) => r.server));
  const confirmed = servers.filter((s) => byHealth.has(s) || told(s)).length;
  const lines: string[] = [];
  if (servers.length === 0) lines.push(`rotated ${label} in ${shown}; no running servers`);
  else if (confirmed === servers.length)
    lines.push(`rotated ${label} in ${shown}; ${plural(confirmed, 'running server')} confirmed`);
  else
    lines.push(`rotated ${label} in ${shown}; ${confirmed} of ${plural(servers.length, 'running server')} confirmed`);

  for (const s of servers.filter((s) => !s.watch && !told(s))) {
    lines.push(
      `warning: server ${s.url} (pid ${s.pid}) runs with --no-watch and accepts the old key until it is restarted`,
    );
  }
  for (const r of results.filter((r) => !r.confirmed && !told(r.server))) {
    const why = r.sawRevision
      ? 'it still serves an older revision; is the file valid for it?'
      : 'it did not answer its health check';
    lines.push(
      `warning: server ${r.server.url} (pid ${r.server.pid}) did not confirm the new key within ${seconds(timeoutMs)} (${why}); it may still accept the old key`,
    );
  }
  return [...lines, ...tail];
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(2))}s`;
}
