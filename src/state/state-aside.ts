import type { Logger } from '../logger.js';
import { setStateAside, type MonthlyUsage, type StateFileRead } from './state-file.js';

/*
 * What a usage store does with a state file it cannot count on as it is: a corrupt
 * one, or one of a later month than the server's clock, is set aside (renamed), never silently
 * written over, with a warning that says where it went.
 */

/** At start: whether the file can be used (a corrupt one once set aside), warning when not. */
export async function keepsFile(target: string, read: StateFileRead, now: number, logger: Logger): Promise<boolean> {
  if (read.status === 'unreadable') {
    logger.warn(
      `cannot read usage state ${target} (${read.reason}); usage is kept in memory only and the file is left as it is`,
    );
    return false;
  }
  if (read.status !== 'corrupt') return true;
  try {
    const aside = await setStateAside(target, now);
    logger.warn(`usage state ${target} is corrupt (${read.reason}); moved it to ${aside} and started this month at 0`);
    return true;
  } catch (err) {
    logger.warn(
      `usage state ${target} is corrupt (${read.reason}) and could not be moved aside (${(err as Error).message}); ` +
        'usage is kept in memory only and the file is left as it is',
    );
    return false;
  }
}

/**
 * A file of a month later than the server's clock (left by a server run with a future `--clock`)
 * is not the count of the clock's month, and must not turn counting or saving off: it is set aside
 * (renamed, so its count is kept) with a warning, and the clock's month is counted and written.
 */
export async function setLaterMonthAside(
  target: string,
  found: MonthlyUsage,
  month: string,
  now: number,
  logger: Logger,
): Promise<void> {
  const what = `usage state ${target} holds ${found.month} (${found.requests} requests), a later month than the server's clock (${month})`;
  try {
    const aside = await setStateAside(target, now, 'later-month');
    logger.warn(`${what}; moved it to ${aside} and counting goes on in ${month}`);
  } catch (err) {
    logger.warn(
      `${what}, and it could not be moved aside (${(err as Error).message}); it is written over with the count of ${month}`,
    );
  }
}
