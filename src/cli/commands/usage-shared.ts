import type { Config } from '../../config/types.js';
import { redactStoreUrl } from '../../config/store-url.js';
import { openLimitStore } from '../../state/redis-store.js';
import { EXIT_FAILURE, EXIT_OK, type CommandIO } from './io.js';
import { rateWindowLine } from './usage-window.js';

/**
 * `mockapi usage` through the shared store: the month's count of every server of the
 * project, by Redis's clock; `reset` zeroes it for all of them at once (each server's next request
 * is counted from 0: they hold no count of their own).
 */
export async function runSharedUsage(url: string, config: Config, opts: { json?: boolean; reset?: boolean }, io: CommandIO): Promise<number> {
  const where = redactStoreUrl(url);
  let down: string | undefined;
  const store = await openLimitStore({ url, project: config.project, onDown: (reason) => (down ??= reason), connectWaitMs: 3000 });
  try {
    const { month, requests: counted } = opts.reset ? await store.resetUsage() : await store.usage();
    const requests = opts.reset ? 0 : counted;
    const quota = config.limits.monthlyQuota ?? null;
    const remaining = quota === null ? null : Math.max(0, quota - requests);
    if (opts.json) {
      io.out(JSON.stringify({ month, requests, quota, remaining, state: null, store: where }));
    } else if (opts.reset) {
      io.out(`Usage for ${month} reset to 0 (was ${counted}) in ${where}, for every server of ${config.project}`);
    } else {
      io.out(`${month} (UTC): ${requests} ${requests === 1 ? 'request' : 'requests'}, every server of ${config.project} through ${where}`);
      io.out(quota === null ? 'quota: none (limits.monthlyQuota is not set)' : `quota: ${quota} a month, ${remaining} remaining`);
      const window = await rateWindowLine(config);
      if (window !== undefined) io.out(window);
    }
    return EXIT_OK;
  } catch (err) {
    io.err(`cannot ${opts.reset ? 'reset' : 'read'} usage in the store ${where}: ${down ?? (err as Error).message}`);
    return EXIT_FAILURE;
  } finally {
    await store.close();
  }
}
