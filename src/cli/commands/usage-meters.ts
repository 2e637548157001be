import type { Config, LimitsConfig } from '../../config/types.js';
import { DEFAULT_KEY_NAME } from '../../config/types.js';
import { meterUsage, type MeterUsage } from '../../control/key-usage.js';
import type { LimitStore } from '../../state/redis-store.js';
import type { CommandIO } from './io.js';
import { newestRunning } from './running-server.js';

/*
 * The meters in `mockapi usage`: each meter's window (or month, or total) of every key. Through a
 * shared store they are read (and reset) there; without one they live in a running server's
 * memory, and are read from (and reset through) the newest running server of the config.
 */

/** Every key's meters by key name; undefined when no limits of the config have meters. */
export type MetersByKey = Record<string, Record<string, MeterUsage>>;

/** The limits of each key of the config that has meters, by key name. */
function meteredKeys(config: Config): Array<[string, LimitsConfig]> {
  const all: Array<[string, LimitsConfig]> = [
    [DEFAULT_KEY_NAME, config.limits],
    ...(config.keys ?? []).map((k): [string, LimitsConfig] => [k.name, k.limits]),
  ];
  return all.filter(([, limits]) => limits.meters !== undefined);
}

/** The meters of every key through the store (`open` opens a key's store), or emptied first with `reset`. */
export async function storeMeters(
  config: Config,
  open: (keyName: string | undefined) => Promise<LimitStore>,
  reset: boolean,
): Promise<MetersByKey | undefined> {
  const keys = meteredKeys(config);
  if (keys.length === 0) return undefined;
  const out: MetersByKey = {};
  for (const [name, limits] of keys) {
    const store = await open(name === DEFAULT_KEY_NAME ? undefined : name);
    try {
      if (reset) await store.resetMeters(false, true); // the budgets, as the month; windows are the rate window's kind
      const { used, resetMs, month } = await store.meterStatus(limits.meters!);
      out[name] = meterUsage(
        limits.meters!.map((meter, i) => ({ meter, used: used[i]!, resetMs: resetMs[i]! })),
        month,
      );
    } finally {
      await store.close();
    }
  }
  return out;
}

interface ServerUsage {
  meters?: Record<string, MeterUsage>;
  keys?: Record<string, { meters?: Record<string, MeterUsage> }>;
}

/** The URL of the newest running server of the config, or undefined. */
export async function newestServer(config: Config): Promise<string | undefined> {
  return (await newestRunning(config.file))?.url;
}

function adminHeaders(token: string | undefined, json: boolean): Record<string, string> {
  return {
    ...(token === undefined || token === '' ? {} : { 'x-mockapi-admin-token': token }),
    ...(json ? { 'content-type': 'application/json' } : {}),
  };
}

/**
 * The meters of every key as the newest running server holds them (`reset`: after it emptied its
 * meters' months and totals, as `POST /__mockapi/reset {"usage": true}` does); undefined when no limits have
 * meters, `'none'` when no server of the config runs or answers.
 */
export async function serverMeters(
  config: Config,
  reset: boolean,
  token = process.env.MOCKAPI_ADMIN_TOKEN,
): Promise<MetersByKey | 'none' | undefined> {
  if (meteredKeys(config).length === 0) return undefined;
  const url = await newestServer(config);
  if (url === undefined) return 'none';
  try {
    if (reset) {
      const body = JSON.stringify({
        journal: false,
        usage: true,
        rateLimit: false,
        sequences: false,
        scenarios: false,
        clock: false,
        stubs: false,
      });
      const res = await fetch(`${url}/__mockapi/reset`, {
        method: 'POST',
        headers: adminHeaders(token, true),
        body,
        signal: AbortSignal.timeout(5000),
      });
      await res.body?.cancel();
      if (!res.ok) return 'none';
    }
    const res = await fetch(`${url}/__mockapi/usage`, {
      headers: adminHeaders(token, false),
      signal: AbortSignal.timeout(2000),
    });
    if (!res.ok) return 'none';
    const usage = (await res.json()) as ServerUsage;
    const out: MetersByKey = {};
    if (usage.meters !== undefined) out[DEFAULT_KEY_NAME] = usage.meters;
    for (const [name, key] of Object.entries(usage.keys ?? {})) if (key.meters !== undefined) out[name] = key.meters;
    return out;
  } catch {
    return 'none';
  }
}

/** `tokens: 1200 / 30000 per 1m, 28800 remaining` — one line per meter of each key. */
export function showMeters(io: CommandIO, meters: MetersByKey | 'none' | undefined, config: Config): void {
  if (meters === undefined) return;
  if (meters === 'none') {
    io.out('meters: kept by a running server (or a shared store); no server of this config runs');
    return;
  }
  for (const [key, byName] of Object.entries(meters)) {
    for (const [name, m] of Object.entries(byName)) {
      const per =
        m.window === 'month' ? `in ${m.month ?? 'this month'}` : m.window === 'total' ? 'in total' : `per ${m.window}`;
      const who = key === DEFAULT_KEY_NAME && config.keys === undefined ? '' : `key ${key}: `;
      const spent =
        m.remaining <= 0
          ? m.window === 'month' || m.window === 'total'
            ? '; spent'
            : `; full, the oldest leaves in ${m.resetSeconds} s`
          : '';
      io.out(`${who}meter ${name}: ${m.used} / ${m.limit} ${per}, ${m.remaining} remaining${spent}`);
    }
  }
}
