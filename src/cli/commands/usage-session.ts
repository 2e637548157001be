import type { Config } from '../../config/types.js';
import { DEFAULT_KEY_NAME } from '../../config/types.js';
import type { MeterUsage } from '../../control/key-usage.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type CommandIO } from './io.js';
import { missingSession } from './requests.js';
import type { UsageOptions, UsageReport } from './usage.js';
import { newestServer, showMeters, type MetersByKey } from './usage-meters.js';
import type { KeyUsageLine } from './usage-keys.js';
import { formatWindow } from './usage-window.js';

/*
 * `mockapi usage --session <id>`: a named session's month, rate window and meters, as the newest
 * running server of the config holds them (a session's counts live in the server's memory, never
 * in the state file or the store), and `--reset` empties its month and budgets there.
 */

/** What `GET /__mockapi/usage?session=` answers, the fields shown. */
interface SessionUsage {
  month: string;
  requests: number;
  quota: number | null;
  remaining: number | null;
  rateLimit: { limit: number; remaining: number; resetSeconds: number } | null;
  meters?: Record<string, MeterUsage>;
  keys?: Record<string, Omit<KeyUsageLine, 'state'> & { meters?: Record<string, MeterUsage> }>;
}

/** The JSON of `--session`: the report of `mockapi usage`, for that session. */
export type SessionUsageReport = UsageReport & { session: string };

function adminHeaders(token: string | undefined): Record<string, string> {
  return token === undefined || token === '' ? {} : { 'x-mockapi-admin-token': token };
}

async function ask(
  url: string,
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
): Promise<unknown> {
  const headers = { ...adminHeaders(token), ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
  const res = await fetch(`${url}/__mockapi/${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(5000),
  });
  const answer = (await res.json().catch(() => ({}))) as { message?: string };
  if (!res.ok) throw new Error(`the server at ${url} answered ${res.status}: ${answer.message ?? 'no reason given'}`);
  return answer;
}

/** The session's figures as `mockapi usage` reports them. */
function reportOf(id: string, usage: SessionUsage): SessionUsageReport {
  const meters: MetersByKey = {};
  if (usage.meters !== undefined) meters[DEFAULT_KEY_NAME] = usage.meters;
  for (const [name, key] of Object.entries(usage.keys ?? {})) if (key.meters !== undefined) meters[name] = key.meters;
  const keys =
    usage.keys === undefined
      ? undefined
      : Object.fromEntries(
          Object.entries(usage.keys).map(([name, k]): [string, KeyUsageLine] => [
            name,
            { month: k.month, requests: k.requests, quota: k.quota, remaining: k.remaining, plan: k.plan, state: null },
          ]),
        );
  return {
    session: id,
    month: usage.month,
    requests: usage.requests,
    quota: usage.quota,
    remaining: usage.remaining,
    state: null,
    ...(keys === undefined ? {} : { keys }),
    ...(Object.keys(meters).length === 0 ? {} : { meters }),
  };
}

/** Prints (or, with `--reset`, empties then prints) the usage of session `opts.session` of the newest running server. */
export async function runSessionUsage(
  config: Config,
  opts: UsageOptions & { session: string },
  io: CommandIO,
  token = process.env.MOCKAPI_ADMIN_TOKEN,
): Promise<number> {
  if (opts.store !== undefined || typeof opts.state === 'string') {
    io.err(
      `--session reads the session from the running server's memory: ${opts.store !== undefined ? '--store' : '--state'} does not apply to it`,
    );
    return EXIT_USAGE;
  }
  const url = await newestServer(config);
  if (url === undefined) {
    io.err(
      `no running mockapi serve of ${opts.config}: a session's usage is kept in the memory of the server that holds it`,
    );
    return EXIT_FAILURE;
  }
  const missing = await missingSession(url, token, opts.session);
  if (missing !== undefined) {
    io.err(missing);
    return EXIT_FAILURE;
  }
  const query = `session=${encodeURIComponent(opts.session)}`;
  try {
    if (opts.reset === true) {
      const parts = {
        journal: false,
        usage: true,
        rateLimit: false,
        sequences: false,
        scenarios: false,
        clock: false,
        stubs: false,
      };
      await ask(url, 'POST', `reset?${query}`, token, parts);
    }
    const usage = (await ask(url, 'GET', `usage?${query}`, token)) as SessionUsage;
    const report = reportOf(opts.session, usage);
    if (opts.json === true) {
      io.out(JSON.stringify(report));
      return EXIT_OK;
    }
    if (opts.reset === true)
      io.out(`Usage of session ${opts.session} reset to 0 (its month and its meters' budgets) in the server at ${url}`);
    showSession(io, report, usage, url, config);
    return EXIT_OK;
  } catch (err) {
    io.err((err as Error).message);
    return EXIT_FAILURE;
  }
}

function showSession(io: CommandIO, r: SessionUsageReport, usage: SessionUsage, url: string, config: Config): void {
  io.out(`session ${r.session} of the server at ${url}`);
  io.out(`${r.month} (UTC): ${r.requests} ${r.requests === 1 ? 'request' : 'requests'}`);
  io.out(
    r.quota === null
      ? 'quota: none (limits.monthlyQuota is not set)'
      : `quota: ${r.quota} a month, ${r.remaining} remaining`,
  );
  const rate = usage.rateLimit;
  const limit = config.limits.rateLimit;
  if (rate !== null && limit !== undefined) {
    const frees = rate.remaining === 0 ? `; full: a slot frees in ${rate.resetSeconds} s` : '';
    io.out(
      `rate limit: ${rate.limit} ${rate.limit === 1 ? 'request' : 'requests'} per ${formatWindow(limit.windowMs)}; ${Math.max(0, rate.limit - rate.remaining)} used in the window now, ${rate.remaining} remaining${frees}`,
    );
  }
  for (const [name, k] of Object.entries(r.keys ?? {})) {
    if (name === DEFAULT_KEY_NAME) continue;
    const quota = k.quota === null ? 'no quota' : `quota ${k.quota} a month, ${k.remaining} remaining`;
    io.out(
      `key ${name}${k.plan === null ? '' : ` (plan ${k.plan})`}: ${k.requests} ${k.requests === 1 ? 'request' : 'requests'}; ${quota}`,
    );
  }
  showMeters(io, r.meters, config);
}
