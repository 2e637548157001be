import { copyEntry } from '../control/journal.js';
import { viewEntry, type RawEntry } from '../control/journal-entry.js';
import type { Logger } from '../logger.js';
import { COMMAND_TIMEOUT_MS, script, type FleetConnection } from './connection.js';
import type { FleetKeys } from './keys.js';
import { ENTRY_FORMAT, streamSeq } from './journal-wire.js';

/** Entries in one script call at most; a turn with more sends several (still one round trip each, pipelined). */
export const MAX_BATCH = 256;
/** Calls on their way to Redis at once: a slow Redis makes entries wait here, bounded, not in the client's queue. */
export const MAX_IN_FLIGHT = 4;

// ARGV: the stream's cap, the host, then (endpoint, entry) pairs. Counts each endpoint's requests;
// adds each entry (when the journal keeps any) with the id 0-<next>: one order for every host.
// Answers the first id added ('' when none).
const ADD = script(`
local cap = tonumber(ARGV[1])
local first = ''
for i = 3, #ARGV, 2 do
  if ARGV[i] ~= '' then redis.call('HINCRBY', KEYS[2], ARGV[i], 1) end
  if cap > 0 then
    local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', cap, '0-*', 'v', '${ENTRY_FORMAT}', 'h', ARGV[2], 'e', ARGV[i + 1])
    if first == '' then first = id end
  end
end
return first
`);

interface Item {
  time: number;
  endpoint: string;
  text: string;
  /** Made while the store was away: counted in the line said when it is back. */
  kept: boolean;
}

/**
 * Writes this host's journal entries to the fleet's stream: the entries of one event-loop turn go
 * in one script call at the end of the turn, so sharing the journal costs one round trip per turn,
 * not per request, and nothing on a request's path waits for it.
 * While Redis is away (or a write fails) entries wait here, the newest `journal.size` of them;
 * when it is back they are added in order of their time, and a line on stderr says how many.
 */
export interface JournalSink {
  add(entry: RawEntry): void;
  /** Resolves once what was recorded so far is in Redis (or kept, the store away): a query on this host then sees it. */
  flush(): Promise<void>;
  /** The id of the last entry this host added; called with each batch's last id. */
  onWritten(listener: (lastId: number) => void): void;
  close(): Promise<void>;
}

export function createJournalSink(conn: FleetConnection, keys: FleetKeys, host: string, capacity: () => number, logger: Logger): JournalSink {
  let turn: RawEntry[] = [];
  let scheduled = false;
  let queue: Item[] = [];
  let inFlight = 0;
  let dropped = 0;
  let keptCount = 0;
  let retry: NodeJS.Timeout | undefined;
  let queued = 0; // items ever queued
  let settled = 0; // of those, written (or dropped)
  const waiters: { upTo: number; done: () => void }[] = [];
  const written: ((lastId: number) => void)[] = [];

  const limit = (): number => Math.max(capacity(), 1000);
  const release = (): void => {
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i]!;
      if (settled >= w.upTo || !conn.up) {
        waiters.splice(i, 1);
        w.done();
      }
    }
  };

  function endTurn(): void {
    scheduled = false;
    const cap = capacity();
    for (const raw of turn) {
      const view = cap > 0 ? viewEntry(raw) : undefined;
      queue.push({ time: raw.time, endpoint: raw.endpoint ?? '', text: view === undefined ? '' : JSON.stringify(view), kept: !conn.up });
      queued++;
      if (!conn.up) keptCount++;
    }
    turn = [];
    const over = queue.length - limit();
    if (over > 0) {
      // The oldest go: the stream keeps the newest `journal.size` anyway.
      keptCount -= queue.slice(0, over).filter((i) => i.kept).length;
      queue = queue.slice(over);
      dropped += over;
      settled += over;
    }
    pump();
  }

  function pump(): void {
    while (conn.up && inFlight < MAX_IN_FLIGHT && queue.length > 0) {
      const chunk = queue.splice(0, MAX_BATCH);
      inFlight++;
      const args = [String(capacity()), host];
      for (const item of chunk) args.push(item.endpoint, item.text);
      conn.run(ADD, [keys.journal, keys.counts], args).then(
        (first) => {
          inFlight--;
          settled += chunk.length;
          if (typeof first === 'string' && first !== '') for (const listener of written) listener(streamSeq(first) + chunk.length - 1);
          const kept = chunk.filter((i) => i.kept).length;
          if (kept > 0) sayCaughtUp(kept);
          release();
          pump();
        },
        () => {
          // Away, or too slow: back to the front, in their order, and tried again once it answers.
          inFlight--;
          queue = [...chunk.map((i) => ({ ...i, kept: true })), ...queue];
          keptCount += chunk.filter((i) => !i.kept).length;
          release();
          clearTimeout(retry);
          retry = setTimeout(pump, 1000);
          retry.unref();
        },
      );
    }
    release();
  }

  let caughtUp = 0;
  function sayCaughtUp(n: number): void {
    caughtUp += n;
    keptCount -= n;
    if (keptCount > 0) return;
    logger.info(`fleet: Redis is back; added ${caughtUp} journal entr${caughtUp === 1 ? 'y' : 'ies'} kept while it was away, in order of their time${dropped > 0 ? ` (${dropped} older ones did not fit in server.journal and were dropped)` : ''}`);
    caughtUp = 0;
    dropped = 0;
  }

  conn.onUp(() => {
    // Kept entries first, oldest first: what was answered while Redis was away comes in time order.
    queue.sort((a, b) => Number(b.kept) - Number(a.kept) || a.time - b.time);
    pump();
  });

  return {
    add(entry) {
      turn.push(copyEntry(entry));
      if (!scheduled) {
        scheduled = true;
        setImmediate(endTurn);
      }
    },
    flush() {
      if (scheduled) endTurn();
      if (settled >= queued || !conn.up) return Promise.resolve();
      return new Promise((done) => {
        // Bounded: a Redis that does not answer leaves the entries kept, and the query goes on.
        const timer = setTimeout(done, COMMAND_TIMEOUT_MS);
        waiters.push({ upTo: queued, done: () => (clearTimeout(timer), done()) });
      });
    },
    onWritten: (listener) => void written.push(listener),
    async close() {
      clearTimeout(retry);
      await this.flush();
    },
  };
}
