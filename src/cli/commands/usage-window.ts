import type { Config } from '../../config/types.js';
import { newestRunning } from './running-server.js';

/** `60000` → `1m`, `1500` → `1500ms`: a window as the config would write it. */
export function formatWindow(ms: number): string {
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** What `GET /__mockapi/usage` says of the rate window. */
interface WindowFigures {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

async function askServer(url: string, token: string | undefined): Promise<WindowFigures | undefined> {
  try {
    const headers: Record<string, string> =
      token === undefined || token === '' ? {} : { 'x-mockapi-admin-token': token };
    const res = await fetch(`${url}/__mockapi/usage`, { headers, signal: AbortSignal.timeout(2000) });
    if (!res.ok) {
      await res.body?.cancel();
      return undefined;
    }
    const body = (await res.json()) as { rateLimit?: WindowFigures | null };
    return body.rateLimit ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * The line `mockapi usage` prints about the rate limit, or undefined without one. The rolling window
 * lives in a running server's memory (or in the shared store), never in the state file, so it is
 * read from the newest running server of the config (`$MOCKAPI_ADMIN_TOKEN` for one that requires
 * a token); without one, the line says what the limit is and why there is nothing to count.
 */
export async function rateWindowLine(
  config: Config,
  token = process.env.MOCKAPI_ADMIN_TOKEN,
): Promise<string | undefined> {
  const limit = config.limits.rateLimit;
  if (limit === undefined) return undefined;
  const per = `${limit.requests} ${limit.requests === 1 ? 'request' : 'requests'} per ${formatWindow(limit.windowMs)}`;
  const server = await newestRunning(config.file);
  if (server === undefined)
    return `rate limit: ${per}; no server of this config runs (the window is kept by a running server)`;
  const figures = await askServer(server.url, token);
  if (figures === undefined)
    return `rate limit: ${per}; the server at ${server.shown} did not say how full its window is`;
  const used = Math.max(0, figures.limit - figures.remaining);
  const frees = figures.remaining === 0 ? `; full: a slot frees in ${figures.resetSeconds} s` : '';
  return `rate limit: ${per}; ${used} used in the window now, ${figures.remaining} remaining (server at ${server.shown})${frees}`;
}
