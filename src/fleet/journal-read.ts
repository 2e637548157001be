import type { JournalEntry } from '../control/journal-entry.js';
import type { Logger } from '../logger.js';
import { COMMAND_TIMEOUT_MS, sendBlocking, type FleetConnection } from './connection.js';
import { createSkipNotes, nextSeq, readStreamEntry, streamSeq } from './journal-wire.js';

/** How long one blocking read waits for new entries before it looks again (and stops when nobody listens). */
const BLOCK_MS = 1000;
/** After a failed read, the next one waits this long. */
const RETRY_MS = 250;

/** Reads one journal of the fleet (the default session's, or a named session's): ranges of it, and its new entries as they are added. */
export interface JournalReader {
  /** The newest `cap` entries with `since < id ≤ upTo`, oldest first; skipped ones are noted on stderr. */
  range(cap: number, since?: number, upTo?: number): Promise<JournalEntry[]>;
  /**
   * Calls `listener` with every entry added from now on, in the stream's order, until `leave`;
   * `from` is the last id before them (a range up to it and the listener miss nothing between).
   */
  join(listener: (entry: JournalEntry, host: string) => void): Promise<{ from: number; leave(): void }>;
  /** True while the tail reads this journal (someone listens and the last read answered). */
  readonly live: boolean;
  /** The highest id read so far. */
  readonly highest: number;
}

/**
 * A host's tail of the fleet's journals: one blocking read (`XREAD … STREAMS`) over every journal
 * someone on this host listens to, on the host's one blocking connection — a thousand sessions
 * with a wait open cost one read, not a thousand. A journal joined while the read blocks is added
 * at once: the host's own nudge stream (in the read too) gets an entry, which ends the read.
 */
export interface JournalTail {
  /** The reader of the stream `key`, made on first use; `forget` drops it (a session dropped). */
  reader(key: string): JournalReader;
  forget(key: string): void;
  close(): Promise<void>;
}

type Listener = (entry: JournalEntry, host: string) => void;

interface Followed {
  key: string;
  listeners: Set<Listener>;
  /** The id of the last stream entry read (the read goes on from there); undefined until first joined. */
  position: number | undefined;
  /** The id of the last journal entry delivered (a stream entry holds several: see journal-wire.ts). */
  delivered: number;
  highest: number;
  live: boolean;
  reader: JournalReader;
}

export function createJournalTail(conn: FleetConnection, nudgeKey: string, logger: Logger): JournalTail {
  const skipped = createSkipNotes((m) => logger.warn(m));
  const streams = new Map<string, Followed>();
  let running = false;
  let reading: Set<string> | undefined; // the streams of the read in flight
  let nudged = '0-0';

  /** The entries of stream entries (oldest first), those with `since < id ≤ upTo`; skipped ones are noted. */
  const parse = (f: Followed, raw: unknown[], since = 0, upTo = Infinity): { entry: JournalEntry; host: string }[] => {
    const out: { entry: JournalEntry; host: string }[] = [];
    for (const item of raw)
      for (const read of readStreamEntry(item)) {
        if (!(read.id > since && read.id <= upTo)) continue;
        if (!read.ok) {
          skipped(read);
          continue;
        }
        if (read.id > f.highest) f.highest = read.id;
        out.push({ entry: read.entry, host: read.host });
      }
    return out;
  };

  const listened = (): Followed[] => [...streams.values()].filter((f) => f.listeners.size > 0);

  async function loop(): Promise<void> {
    running = true;
    try {
      for (let follow = listened(); follow.length > 0; follow = listened()) {
        reading = new Set(follow.map((f) => f.key));
        let reply: unknown;
        try {
          const keys = [nudgeKey, ...follow.map((f) => f.key)];
          const ids = [nudged, ...follow.map((f) => `0-${f.position ?? 0}`)];
          reply = await sendBlocking(
            conn.blocking(),
            ['XREAD', 'COUNT', '1024', 'BLOCK', String(BLOCK_MS), 'STREAMS', ...keys, ...ids],
            BLOCK_MS + COMMAND_TIMEOUT_MS,
          );
          for (const f of follow) f.live = true;
        } catch {
          for (const f of follow) f.live = false;
          await new Promise((done) => setTimeout(done, RETRY_MS).unref());
          continue;
        } finally {
          reading = undefined;
        }
        for (const [key, entries] of streamsOf(reply)) {
          if (entries.length === 0) continue;
          const last = entries[entries.length - 1] as [string];
          if (key === nudgeKey) {
            nudged = last[0];
            continue;
          }
          const f = streams.get(key);
          if (f === undefined) continue;
          // A join while this read was out moved `delivered` to the newest entry then: what is at
          // or below it is in that join's range already, not news.
          const since = f.delivered;
          f.position = Math.max(f.position ?? 0, streamSeq(last[0]));
          f.delivered = Math.max(f.delivered, nextSeq(last) - 1);
          for (const { entry, host } of parse(f, entries, since))
            for (const listener of [...f.listeners]) listener(entry, host);
        }
      }
    } finally {
      running = false;
      for (const f of streams.values()) f.live = false;
    }
  }

  /** Where a stream's tail starts: its last stream entry now, and the id of the last journal entry it holds. */
  async function start(key: string): Promise<{ position: number; delivered: number }> {
    const newest = (await conn.send(['XREVRANGE', key, '+', '-', 'COUNT', '1'])) as [string][];
    if (newest.length === 0) return { position: 0, delivered: 0 };
    return { position: streamSeq(newest[0]![0]), delivered: nextSeq(newest[0]) - 1 };
  }

  function make(key: string): Followed {
    const f: Followed = {
      key,
      listeners: new Set(),
      position: undefined,
      delivered: 0,
      highest: 0,
      live: false,
      reader: {
        async range(cap, since, upTo) {
          if (cap <= 0) return [];
          const after = since === undefined || since <= 0 ? 0 : since;
          // A stream entry's id is its first journal entry's: the newest `cap` stream entries from
          // after `since` up to `upTo` hold at least `cap` entries of the range (all but the newest
          // within it); the one before them may hold some past `since` too.
          const [raw, before] = await Promise.all([
            conn.send([
              'XREVRANGE',
              key,
              upTo === undefined ? '+' : `0-${upTo}`,
              after === 0 ? '-' : `(0-${after}`,
              'COUNT',
              String(cap),
            ]) as Promise<unknown[]>,
            after === 0 ? [] : (conn.send(['XREVRANGE', key, `0-${after}`, '-', 'COUNT', '1']) as Promise<unknown[]>),
          ]);
          // The one before only when these are all there are: were it added to `cap` stream entries
          // of which some were skipped (damaged), its entries would fill their places past a gap.
          const read = raw.length < cap ? [...before, ...raw.reverse()] : raw.reverse();
          const entries = parse(f, read, after, upTo ?? Infinity).map((r) => r.entry);
          return entries.length > cap ? entries.slice(entries.length - cap) : entries;
        },
        async join(listener) {
          // A stream nobody listened to starts from its last entry now (what came before is a range's).
          if (f.listeners.size === 0 || f.position === undefined) {
            const at = await start(key);
            if (f.listeners.size === 0) {
              f.position = at.position;
              f.delivered = at.delivered;
            }
          }
          const from = f.delivered;
          f.listeners.add(listener);
          if (!running) void loop();
          else if (reading !== undefined && !reading.has(key))
            void conn.send(['XADD', nudgeKey, 'MAXLEN', '~', '16', '*', 'k', key]).catch(() => {});
          return { from, leave: () => void f.listeners.delete(listener) };
        },
        get live() {
          return f.live && f.listeners.size > 0;
        },
        get highest() {
          return f.highest;
        },
      },
    };
    return f;
  }

  return {
    reader(key) {
      let f = streams.get(key);
      if (f === undefined) streams.set(key, (f = make(key)));
      return f.reader;
    },
    forget(key) {
      streams.delete(key);
    },
    async close() {
      streams.clear();
      await conn.send(['DEL', nudgeKey]).catch(() => {});
    },
  };
}

/** The entries of each stream of an XREAD reply (`[[key, entries], …]`, or a map); none for a null reply. */
function streamsOf(reply: unknown): [string, unknown[]][] {
  if (Array.isArray(reply))
    return reply.map((s) => [String((s as unknown[])[0]), ((s as unknown[])[1] as unknown[]) ?? []]);
  if (reply instanceof Map) return [...reply].map(([k, v]) => [String(k), (v as unknown[]) ?? []]);
  if (typeof reply === 'object' && reply !== null)
    return Object.entries(reply).map(([k, v]) => [k, (v as unknown[]) ?? []]);
  return [];
}
