import type { Config } from '../../config/types.js';
import { listServers } from '../../state/registry.js';
import { connectableUrl } from '../../state/confirm-servers.js';

/** What `GET /__mockapi/usage` says of the month: apiKey's count, and each key's by name. */
export interface LiveCounts {
  month: string;
  requests: number;
  keys: Record<string, number>;
}

async function askServer(url: string, token: string | undefined): Promise<LiveCounts | undefined> {
  try {
    const headers: Record<string, string> =
      token === undefined || token === '' ? {} : { 'x-mockapi-admin-token': token };
    const res = await fetch(`${connectableUrl(url)}/__mockapi/usage`, { headers, signal: AbortSignal.timeout(2000) });
    if (!res.ok) {
      await res.body?.cancel();
      return undefined;
    }
    const body = (await res.json()) as {
      month?: unknown;
      requests?: unknown;
      keys?: Record<string, { requests?: unknown }>;
    };
    if (typeof body.month !== 'string' || typeof body.requests !== 'number') return undefined;
    const keys: Record<string, number> = {};
    for (const [name, figures] of Object.entries(body.keys ?? {}))
      if (typeof figures.requests === 'number') keys[name] = figures.requests;
    return { month: body.month, requests: body.requests, keys };
  } catch {
    return undefined;
  }
}

/**
 * The month's counts as the running servers of the config hold them now. A server writes its count
 * to the state file at most once a second, so right after a request the file lags behind; a
 * server's own figure is the file's total as it last read it plus what it admitted since. Several
 * servers may share the file: the highest figure of each is taken (the file's own count still
 * counts, see {@link liveAtLeast}). Servers that do not answer are skipped; none: undefined.
 */
export async function liveCounts(
  config: Config,
  month: string,
  token = process.env.MOCKAPI_ADMIN_TOKEN,
): Promise<LiveCounts | undefined> {
  const servers = config.file === undefined ? [] : await listServers(config.file).catch(() => []);
  const answers = (await Promise.all(servers.map((server) => askServer(server.url, token)))).filter(
    (a): a is LiveCounts => a !== undefined && a.month === month,
  );
  if (answers.length === 0) return undefined;
  const keys: Record<string, number> = {};
  for (const answer of answers)
    for (const [name, n] of Object.entries(answer.keys)) keys[name] = Math.max(keys[name] ?? 0, n);
  return { month, requests: Math.max(...answers.map((a) => a.requests)), keys };
}

/** `fromFile`, or the live figure when a running server has counted more than the file holds yet. */
export function liveAtLeast(fromFile: number, live: number | undefined): number {
  return live === undefined ? fromFile : Math.max(fromFile, live);
}
