import { systemClock, type Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { keepStorePending, takeStorePending } from '../state/store-pending.js';

/*
 * What a store gate keeps across a stop (src/pipeline/store-gate.ts): the requests admitted while
 * the store was away (`storeDown: open`, or with nothing to decide) and not yet added to it, in the pending file beside the
 * state file.
 */

/** Where the pending counts live, for whom, and the clock for the name of a file set aside. */
export interface PendingOptions {
  project: string;
  pendingFile?: string;
  clock?: Clock;
}

/** Counts a previous stop kept for this store and project (see `keepPending`), said on stderr. */
export async function takePending(
  options: PendingOptions,
  where: string,
  logger: Logger,
): Promise<Map<string, number>> {
  const file = options.pendingFile;
  if (file === undefined) return new Map();
  try {
    const taken = await takeStorePending(file, where, options.project);
    if (!(taken instanceof Map)) {
      logger.warn(
        `${file} is not a list of pending counts (${taken.corrupt}); it is left as it is and not added to the limit store`,
      );
      return new Map();
    }
    const total = [...taken.values()].reduce((a, b) => a + b, 0);
    if (total > 0)
      logger.info(
        `${total} ${requestsWord(total)} admitted while the limit store ${where} was unreachable, kept in ${file} by an earlier stop, are added to it once it answers`,
      );
    return taken;
  } catch (err) {
    logger.warn(
      `cannot read ${file} (${(err as Error).message}); requests it keeps for the limit store ${where} are not added to it now`,
    );
    return new Map();
  }
}

/** At stop: keeps what could not be added to the store, and says how many requests it is. */
export async function keepPending(
  options: PendingOptions,
  where: string,
  counts: Map<string, number>,
  logger: Logger,
  /** Why they were counted here, when not `storeDown: open` (admitted with nothing to decide). */
  why = 'limits.storeDown: open',
): Promise<void> {
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const what = `limit store ${where} unreachable at stop: ${total} ${requestsWord(total)} admitted while it was away (${why}) ${total === 1 ? 'is' : 'are'} not in its count`;
  const file = options.pendingFile;
  if (file === undefined) {
    logger.warn(
      `${what}, and ${total === 1 ? 'is' : 'are'} lost: without a state file (--no-state) nothing is kept for the next start`,
    );
    return;
  }
  try {
    const aside = await keepStorePending(file, where, options.project, counts, (options.clock ?? systemClock)());
    if (aside !== undefined) logger.warn(`${file} was not a list of pending counts; moved it to ${aside}`);
    logger.warn(`${what}; kept in ${file}, and added to it by the next server of this config that reaches it`);
  } catch (err) {
    logger.warn(
      `${what}, and could not be kept in ${file} (${(err as Error).message}): ${total === 1 ? 'it is' : 'they are'} lost`,
    );
  }
}

const requestsWord = (n: number): string => (n === 1 ? 'request' : 'requests');
