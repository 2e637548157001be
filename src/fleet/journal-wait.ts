import { ControlError, WaitTimeoutError } from '../control/control-error.js';
import type { JournalEntry, RawEntry } from '../control/journal-entry.js';
import { matchesFilter, type Journal, type RequestFilter } from '../control/journal.js';
import { DEFAULT_WAIT_MS, MAX_WAIT_MS, parseSpan, type WaitOptions } from '../control/wait.js';
import { closestMisses, describeFilter } from '../control/wait-miss.js';
import { flushWrites } from '../http/write-batch.js';
import { mirrored } from '../workers/hub.js';
import type { JournalReader } from './journal-read.js';

/** Entries a timeout looks at for the closest misses. */
const RECENT = 500;

/** A fleet journal entry as the filters read it. */
export const asRaw = (entry: JournalEntry): RawEntry => mirrored(entry);

/**
 * `requests/wait` over every host: listens to the fleet's journal from now on, reads what it held
 * up to that point, and answers once `count` matching entries exist — woken by the entry itself
 * (a blocking read of the stream), never by polling. As the wait of one server: 408 with what
 * matched after the timeout, at most 60 s; stopped at once when `signal` aborts.
 */
export async function waitAcrossHosts(
  reader: JournalReader,
  capacity: number,
  filter: RequestFilter,
  options: WaitOptions,
  signal?: AbortSignal,
): Promise<JournalEntry[]> {
  const count = options.count ?? 1;
  if (!Number.isSafeInteger(count) || count < 0)
    throw new ControlError(400, 'bad_request', `count must be a whole number ≥ 0, got ${String(options.count)}`);
  const timeout = options.timeout === undefined ? DEFAULT_WAIT_MS : parseSpan(options.timeout);
  if (timeout === undefined)
    throw new ControlError(
      400,
      'bad_request',
      `timeout must be a duration such as 500ms or 5s, got ${JSON.stringify(options.timeout)}`,
    );
  const matching = { ...filter, limit: undefined };
  const keep = filter.limit ?? Math.max(capacity, 1);
  let found: JournalEntry[] = [];
  let later: JournalEntry[] = [];
  // What arrived, matching or not, for the timeout's "closest requests seen".
  let recent: JournalEntry[] = [];
  let wake: (() => void) | undefined;
  const joined = await reader.join((entry) => {
    recent.push(entry);
    if (recent.length > 2 * RECENT) recent = recent.slice(-RECENT);
    if (!matchesFilter(asRaw(entry), matching)) return;
    later.push(entry);
    if (later.length > 2 * keep) later = later.slice(later.length - keep);
    wake?.();
  });
  try {
    // Everything up to where the listener starts; the listener has the rest.
    const held = await reader.range(Math.max(capacity, 1), filter.since, joined.from);
    recent = [...held.slice(-RECENT), ...recent];
    found = held.filter((e) => matchesFilter(asRaw(e), matching));
    let seen = found.length;
    const take = (): void => {
      found = [...found, ...later].slice(-Math.max(keep, count));
      seen += later.length;
      later = [];
    };
    take();
    if (seen < count) {
      await new Promise<void>((done, fail) => {
        const finish = (): void => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          wake = undefined;
        };
        const timer = setTimeout(
          () => {
            finish();
            take();
            const what = `${seen} of ${count} request${count === 1 ? '' : 's'} matching ${describeFilter(matching)} arrived within ${Math.min(timeout, MAX_WAIT_MS)} ms`;
            const misses = closestMisses(
              { list: () => recent.slice(-RECENT).map(asRaw) } as unknown as Journal,
              matching,
            );
            fail(new WaitTimeoutError(`${what}; ${misses}`, found.slice(-keep)));
          },
          Math.min(timeout, MAX_WAIT_MS),
        );
        const onAbort = (): void => {
          finish();
          fail(new ControlError(499, 'aborted', 'the wait was cancelled'));
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        wake = () => {
          take();
          if (seen < count) return;
          finish();
          done();
        };
      });
    }
    // As a single server's wait: the answers to the requests it reports (on this host) are written first.
    flushWrites();
    return found.slice(-keep);
  } finally {
    joined.leave();
  }
}
