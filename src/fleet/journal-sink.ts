import type { RawEntry } from '../control/journal-entry.js';
import { entryText } from '../control/journal-text.js';
import type { Logger } from '../logger.js';
import { COMMAND_TIMEOUT_MS, type FleetConnection } from './connection.js';
import type { FleetKeys } from './keys.js';
import { ADD, MAX_BATCH, MAX_IN_FLIGHT, TEXTS } from './journal-script.js';
import { streamSeq } from './journal-wire.js';

interface Item {
  /** This host's number of the entry, given when first sent (sent again: the same number). */
  n: number | undefined;
  time: number;
  /** When it was made (real clock): one that waited past a command's deadline counts as kept. */
  made: number;
  endpoint: string;
  /** The answer's name ('' for none). */
  answer: string;
  text: string;
  /** Made while the store was away, or its write failed: counted in the line said when it is back. */
  kept: boolean;
}

/** A script call whose entries are still being added: the client writes it at the end of the turn. */
interface OpenCall {
  args: string[];
  items: Item[];
}

/**
 * Writes this host's journal entries to the fleet's stream, one script call per event-loop turn.
 * The call is sent at the turn's first entry and the turn's later entries join it before the client
 * writes it (it encodes a command when it writes it): so it is written before the answers of that
 * turn (which wait for the end of the turn too), Redis gets an entry before its client can get the
 * answer, and requests made one after the other on different hosts keep their order. The call's
 * reply says how many entries it carried; any that did not go are sent again. While Redis is away
 * (or a write fails) entries wait here, the newest `server.journal` of them (at least 1,000); when
 * it is back they are added in order of their time, and a line on stderr says how many.
 */
export interface JournalSink {
  add(entry: RawEntry): void;
  /** Resolves once what was recorded so far is in Redis (or kept, the store away): a query on this host then sees it. */
  flush(): Promise<void>;
  /** Told the id of the last entry of each call written. */
  onWritten(listener: (lastId: number) => void): void;
  close(): Promise<void>;
  /** Drops what waits here and writes nothing more (its session was dropped). */
  discard(): void;
}

export function createJournalSink(
  conn: FleetConnection,
  keys: FleetKeys,
  host: string,
  capacity: () => number,
  logger: Logger,
): JournalSink {
  let open: OpenCall | undefined;
  // Calls carry the script's source until one by source has run: at the start and after each
  // reconnection (a fresh or restarted Redis has no scripts), and after Redis said it lacked it. A
  // call by hash refused there would reach Redis only after its answers (a round trip later): a
  // request answered by this host could then be missing from another host's journal query.
  let bySource = true;
  let queue: Item[] = [];
  let inFlight = 0;
  let dropped = 0;
  let caughtUp = 0;
  let lastN = 0;
  let retry: NodeJS.Timeout | undefined;
  let queued = 0; // items ever made
  let settled = 0; // of those, written (or dropped)
  let warnedShort = false;
  let discarded = false;
  const waiters: { upTo: number; done: () => void }[] = [];
  const written: ((lastId: number) => void)[] = [];
  const limit = (): number => Math.max(capacity(), 1000);
  const markKey = keys.marks;

  function release(): void {
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (settled >= waiters[i]!.upTo || !conn.up) waiters.splice(i, 1)[0]!.done();
    }
  }

  /** Sends `items` in one script call, numbering those without a number: by the script's hash, or by its source (`bySource`). */
  function call(items: Item[]): OpenCall {
    const source = bySource;
    const c = {
      args: [
        source ? 'EVAL' : 'EVALSHA',
        source ? ADD.source : ADD.sha,
        '5',
        keys.journal,
        keys.counts,
        markKey,
        keys.requests,
        keys.answers,
        String(capacity()),
        host,
        items.map((i) => i.text).join('\n'),
      ],
      items,
    };
    for (const item of items) c.args.push(String((item.n ??= ++lastN)), item.endpoint, item.answer);
    inFlight++;
    conn.sendOpen(c.args).then(
      (reply) => {
        if (source) bySource = false;
        done(c, reply);
      },
      (err: Error) => (String(err?.message).includes('NOSCRIPT') ? resend(c) : failed(c)),
    );
    return c;
  }

  /** Redis lacked the script (a fresh or restarted Redis): the entries go again, with its source. */
  function resend(c: OpenCall): void {
    inFlight--;
    bySource = true;
    putBack(c.items);
    pump();
  }

  /**
   * Entries Redis is known not to have taken (refused with NOSCRIPT, or added to a call after the
   * client wrote it), back in the queue. Calls sent after theirs may have run and raised the
   * writer's mark past their numbers (the script would skip them as taken), so they are numbered
   * again: after the entries waiting with numbers of their own (a broken write's, which may have
   * been taken and keep theirs) and before those not numbered yet.
   */
  function putBack(items: readonly Item[]): void {
    const numbered = queue.filter((i) => i.n !== undefined);
    const fresh = queue.filter((i) => i.n === undefined);
    queue = [...numbered, ...items.map((i) => ({ ...i, n: undefined })), ...fresh];
  }

  function done(c: OpenCall, reply: unknown): void {
    inFlight--;
    const [first, got, added] = Array.isArray(reply) ? (reply as [unknown, unknown, unknown]) : ['', 0, 0];
    const carried = Math.min(Number(got) || 0, c.items.length);
    if (carried < c.items.length) {
      // Entries added after the client wrote the call: sent again (a client that encodes at once would do this every turn).
      if (!warnedShort)
        logger.warn(`fleet: a journal write carried ${carried} of ${c.items.length} entries; the rest are sent again`);
      warnedShort = true;
      putBack(c.items.slice(carried));
    }
    settled += carried;
    if (typeof first === 'string' && first !== '' && Number(added) > 0)
      for (const listener of written) listener(streamSeq(first) + Number(added) - 1);
    const now = Date.now();
    caughtUp += c.items.slice(0, carried).filter((i) => i.kept || now - i.made > COMMAND_TIMEOUT_MS).length;
    pump();
  }

  function failed(c: OpenCall): void {
    // The connection broke (or Redis refused): back to the front, with their numbers. In number
    // order with the numbered ones already back (a call sent after this one and refused too came
    // back first): the script takes a number only above the writer's mark, so a higher one sent
    // first would make the lower ones look taken.
    inFlight--;
    queue = [...c.items.map((i) => ({ ...i, kept: true })), ...queue];
    inOrder();
    trim();
    release();
    clearTimeout(retry);
    retry = setTimeout(pump, 1000);
    retry.unref();
  }

  function trim(): void {
    const over = queue.length - limit();
    if (over <= 0) return;
    // The oldest go: the stream keeps the newest `server.journal` anyway.
    queue = queue.slice(over);
    dropped += over;
    settled += over;
  }

  function pump(): void {
    if (discarded) return;
    while (conn.up && inFlight < MAX_IN_FLIGHT && queue.length > 0) call(queue.splice(0, MAX_BATCH));
    release();
    if (caughtUp > 0 && queue.length === 0 && inFlight === 0) {
      logger.info(
        `fleet: Redis is back; added ${caughtUp} journal entr${caughtUp === 1 ? 'y' : 'ies'} kept while it was away, in order of their time${dropped > 0 ? ` (${dropped} older ones did not fit in server.journal and were dropped)` : ''}`,
      );
      caughtUp = 0;
      dropped = 0;
    }
  }

  const seal = (): void => {
    open = undefined;
  };

  /** What was sent before (numbered) first, in number order; then what was kept, in order of its time. */
  function inOrder(): void {
    queue.sort((a, b) =>
      a.n === undefined ? (b.n === undefined ? a.time - b.time : 1) : b.n === undefined ? -1 : a.n - b.n,
    );
  }

  conn.onUp(() => {
    bySource = true;
    inOrder();
    pump();
  });

  return {
    add(entry) {
      if (discarded) return;
      const item: Item = {
        n: undefined,
        time: entry.time,
        made: Date.now(),
        endpoint: entry.endpoint ?? '',
        answer: entry.response ?? '',
        text: capacity() > 0 ? entryText(entry) : '',
        kept: !conn.up,
      };
      queued++;
      if (open !== undefined && open.items.length < MAX_BATCH) {
        open.args.push(String((item.n = ++lastN)), item.endpoint, item.answer);
        open.args[TEXTS] += `\n${item.text}`;
        open.items.push(item);
      } else if (conn.up && queue.length === 0 && inFlight < MAX_IN_FLIGHT) {
        open = call([item]);
        setImmediate(seal); // after the client's own end-of-turn write, scheduled before this
      } else {
        queue.push(item);
        trim();
        if (conn.up && queue.length === 1) setImmediate(pump);
      }
    },
    flush() {
      if (settled >= queued || !conn.up) return Promise.resolve();
      return new Promise((done) => {
        // Bounded: a Redis that does not answer leaves the entries kept, and the query goes on.
        const timer = setTimeout(done, COMMAND_TIMEOUT_MS);
        waiters.push({ upTo: queued, done: () => (clearTimeout(timer), done()) });
      });
    },
    onWritten: (listener) => void written.push(listener),
    discard() {
      clearTimeout(retry);
      discarded = true;
      queue = [];
      open = undefined;
      settled = queued;
      release();
    },
    async close() {
      clearTimeout(retry);
      await this.flush();
      // Its mark goes with it: a writer that stopped sends nothing again.
      if (conn.up && queue.length === 0 && inFlight === 0) await conn.send(['HDEL', markKey, host]).catch(() => {});
    },
  };
}
