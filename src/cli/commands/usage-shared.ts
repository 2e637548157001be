import type { Config } from '../../config/types.js';
import { redactStoreUrl } from '../../config/store-url.js';
import { openLimitStore } from '../../state/redis-store.js';
import { peekStorePending, takeStorePending } from '../../state/store-pending.js';
import { EXIT_FAILURE, EXIT_OK, type CommandIO } from './io.js';
import { rateWindowLine } from './usage-window.js';
import { showKeys, type KeyUsageLine } from './usage-keys.js';
import { DEFAULT_KEY_NAME } from '../../config/types.js';
import { showMeters, storeMeters } from './usage-meters.js';

/**
 * `mockapi usage` through the shared store: the month's count of every server of the
 * project, by Redis's clock; `reset` zeroes it for all of them at once (each server's next request
 * is counted from 0: they hold no count of their own).
 */
export async function runSharedUsage(
  url: string,
  config: Config,
  opts: { json?: boolean; reset?: boolean },
  io: CommandIO,
  pendingFile?: string,
): Promise<number> {
  const where = redactStoreUrl(url);
  let down: string | undefined;
  const store = await openLimitStore({
    url,
    project: config.project,
    onDown: (reason) => (down ??= reason),
    connectWaitMs: 3000,
  });
  try {
    const { month, requests: counted } = opts.reset ? await store.resetUsage() : await store.usage();
    if (pendingFile !== undefined) await notePending(pendingFile, where, config.project, opts.reset === true, io);
    const requests = opts.reset ? 0 : counted;
    const quota = config.limits.monthlyQuota ?? null;
    const remaining = quota === null ? null : Math.max(0, quota - requests);
    const keys = await sharedKeys(url, config, opts.reset === true, {
      month,
      requests,
      quota,
      remaining,
      plan: null,
      state: null,
    });
    const meters = await storeMeters(
      config,
      (keyName) =>
        openLimitStore({
          url,
          project: config.project,
          ...(keyName === undefined ? {} : { keyName }),
          connectWaitMs: 3000,
        }),
      opts.reset === true,
    );
    if (opts.json) {
      io.out(
        JSON.stringify({
          month,
          requests,
          quota,
          remaining,
          state: null,
          store: where,
          ...(keys === undefined ? {} : { keys }),
          ...(meters === undefined ? {} : { meters }),
        }),
      );
    } else if (opts.reset) {
      io.out(`Usage for ${month} reset to 0 (was ${counted}) in ${where}, for every server of ${config.project}`);
    } else {
      io.out(
        `${month} (UTC): ${requests} ${requests === 1 ? 'request' : 'requests'}, every server of ${config.project} through ${where}`,
      );
      io.out(
        quota === null
          ? 'quota: none (limits.monthlyQuota is not set)'
          : `quota: ${quota} a month, ${remaining} remaining`,
      );
      const window = await rateWindowLine(config);
      if (window !== undefined) io.out(window);
    }
    if (keys !== undefined && !opts.json) showKeys(io, keys);
    if (!opts.json) showMeters(io, meters, config);
    return EXIT_OK;
  } catch (err) {
    io.err(`cannot ${opts.reset ? 'reset' : 'read'} usage in the store ${where}: ${down ?? (err as Error).message}`);
    return EXIT_FAILURE;
  } finally {
    await store.close();
  }
}

/** Every key of `keys:` read (or zeroed) in the store, by name; undefined without `keys:`. Rejects when the store cannot be reached. */
async function sharedKeys(
  url: string,
  config: Config,
  reset: boolean,
  defaultLine: KeyUsageLine,
): Promise<Record<string, KeyUsageLine> | undefined> {
  if (config.keys === undefined) return undefined;
  const keys: Record<string, KeyUsageLine> = { [DEFAULT_KEY_NAME]: defaultLine };
  for (const key of config.keys) {
    let down: string | undefined;
    const store = await openLimitStore({
      url,
      project: config.project,
      keyName: key.name,
      onDown: (reason) => (down ??= reason),
      connectWaitMs: 3000,
    });
    try {
      const { month, requests } = reset ? await store.resetUsage() : await store.usage();
      const counted = reset ? 0 : requests;
      const quota = key.limits.monthlyQuota ?? null;
      keys[key.name] = {
        month,
        requests: counted,
        quota,
        remaining: quota === null ? null : Math.max(0, quota - counted),
        plan: key.plan ?? null,
        state: null,
      };
    } catch (err) {
      throw new Error(down ?? (err as Error).message);
    } finally {
      await store.close();
    }
  }
  return keys;
}

/**
 * Requests a server admitted while the store was away and kept at its stop (state/store-pending.ts):
 * not in the store's count until a server of this config reaches it — said, and dropped by a reset.
 */
async function notePending(file: string, where: string, project: string, reset: boolean, io: CommandIO): Promise<void> {
  const counts = reset
    ? await takeStorePending(file, where, project).catch(() => new Map<string, number>())
    : await peekStorePending(file, where, project);
  if (!(counts instanceof Map)) return;
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  if (total === 0) return;
  const what = `${total} ${total === 1 ? 'request' : 'requests'} admitted while the store was unreachable`;
  io.err(
    reset
      ? `dropped ${what}, kept in ${file} by a stop`
      : `${what} ${total === 1 ? 'is' : 'are'} kept in ${file} and not in this count yet: the next server of this config adds ${total === 1 ? 'it' : 'them'}`,
  );
}
