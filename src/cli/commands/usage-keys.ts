import type { Config } from '../../config/types.js';
import { DEFAULT_KEY_NAME } from '../../config/types.js';
import { keyStateFile, monthOf, readStateFile, resetStateFile } from '../../state/state-file.js';
import type { CommandIO } from './io.js';

/** One key's figures in `mockapi usage --json`'s `keys` (by name, never the key itself). */
export interface KeyUsageLine {
  month: string;
  requests: number;
  quota: number | null;
  remaining: number | null;
  plan: string | null;
  state: string | null;
}

function line(
  month: string,
  requests: number,
  quota: number | undefined,
  plan: string | null,
  state: string | null,
): KeyUsageLine {
  return {
    month,
    requests,
    quota: quota ?? null,
    remaining: quota === undefined ? null : Math.max(0, quota - requests),
    plan,
    state,
  };
}

/**
 * The month of every key of `keys:` from its state file (`state.key-<name>.json` beside `file`), or
 * zeroes them with `reset`; undefined when the config lists no `keys:`. `defaultLine` is `apiKey`'s.
 * A file that cannot be read is said on stderr and counted as 0.
 */
export async function keysFromFiles(
  config: Config,
  file: string | undefined,
  now: number,
  reset: boolean,
  io: CommandIO,
  defaultLine: KeyUsageLine,
): Promise<Record<string, KeyUsageLine> | undefined> {
  if (config.keys === undefined) return undefined;
  const month = monthOf(now);
  const keys: Record<string, KeyUsageLine> = { [DEFAULT_KEY_NAME]: defaultLine };
  for (const key of config.keys) {
    const quota = key.limits.monthlyQuota;
    const plan = key.plan ?? null;
    if (file === undefined) {
      keys[key.name] = line(month, 0, quota, plan, null);
      continue;
    }
    const state = keyStateFile(file, key.name);
    if (reset) {
      try {
        await resetStateFile(state, now);
      } catch (err) {
        io.err(`cannot reset usage state ${state} of key ${key.name}: ${(err as Error).message}`);
      }
      keys[key.name] = line(month, 0, quota, plan, state);
      continue;
    }
    const read = await readStateFile(state);
    if (read.status === 'corrupt' || read.status === 'unreadable')
      io.err(`usage state ${state} of key ${key.name}: ${read.reason}; counted as 0`);
    const requests = read.status === 'ok' && read.usage.month === month ? read.usage.requests : 0;
    keys[key.name] = line(month, requests, quota, plan, state);
  }
  return keys;
}

/** The text lines of the keys' figures, after `apiKey`'s. */
export function showKeys(io: CommandIO, keys: Record<string, KeyUsageLine>): void {
  for (const [name, k] of Object.entries(keys)) {
    if (name === DEFAULT_KEY_NAME) continue;
    const quota = k.quota === null ? 'no quota' : `quota ${k.quota} a month, ${k.remaining} remaining`;
    io.out(
      `key ${name}${k.plan === null ? '' : ` (plan ${k.plan})`}: ${k.requests} ${k.requests === 1 ? 'request' : 'requests'}; ${quota}`,
    );
  }
}
