import type { JournalEntry } from '../control/journal-entry.js';
import type { Logger } from '../logger.js';
import { COMMAND_TIMEOUT_MS, sendBlocking, streamEntriesOf, type FleetConnection } from './connection.js';
import type { FleetKeys } from './keys.js';
import { createSkipNotes, readStreamEntry, streamSeq } from './journal-wire.js';

/** How long one blocking read waits for new entries before it looks again (and stops when nobody listens). */
const BLOCK_MS = 1000;
/** After a failed read, the next one waits this long. */
const RETRY_MS = 250;

/** Reads the fleet's journal: ranges of it, and its new entries as they are added. */
export interface JournalReader {
  /** The newest `cap` entries with `since < id ≤ upTo`, oldest first; skipped ones are noted on stderr. */
  range(cap: number, since?: number, upTo?: number): Promise<JournalEntry[]>;
  /**
   * Calls `listener` with every entry added from now on, in the stream's order, until `leave`;
   * `from` is the last id before them (a range up to it and the listener miss nothing between).
   */
  join(listener: (entry: JournalEntry, host: string) => void): Promise<{ from: number; leave(): void }>;
  /** True while the tail reads (someone listens and the last read answered). */
  readonly live: boolean;
  /** The highest id read so far. */
  readonly highest: number;
}

export function createJournalReader(conn: FleetConnection, keys: FleetKeys, logger: Logger): JournalReader {
  const skipped = createSkipNotes((m) => logger.warn(m));
  const listeners = new Set<(entry: JournalEntry, host: string) => void>();
  let position: number | undefined; // the tail's: the last id it delivered
  let starting: Promise<number> | undefined;
  let running = false;
  let live = false;
  let highest = 0;

  const parse = (raw: unknown[]): { entry: JournalEntry; host: string }[] => {
    const out: { entry: JournalEntry; host: string }[] = [];
    for (const item of raw) {
      const read = readStreamEntry(item);
      if (!read.ok) {
        skipped(read);
        continue;
      }
      if (read.id > highest) highest = read.id;
      out.push({ entry: read.entry, host: read.host });
    }
    return out;
  };

  async function loop(): Promise<void> {
    running = true;
    try {
      while (listeners.size > 0) {
        let reply: unknown;
        try {
          reply = await sendBlocking(
            conn.blocking(),
            ['XREAD', 'COUNT', '1024', 'BLOCK', String(BLOCK_MS), 'STREAMS', keys.journal, `0-${position ?? 0}`],
            BLOCK_MS + COMMAND_TIMEOUT_MS,
          );
          live = true;
        } catch {
          live = false;
          await new Promise((done) => setTimeout(done, RETRY_MS).unref());
          continue;
        }
        // null when nothing came within BLOCK_MS
        const entries = streamEntriesOf(reply);
        if (entries.length === 0) continue;
        const last = entries[entries.length - 1] as [string];
        position = Math.max(position ?? 0, streamSeq(last[0]));
        for (const { entry, host } of parse(entries)) for (const listener of [...listeners]) listener(entry, host);
      }
    } finally {
      running = false;
      live = false;
    }
  }

  /** Where the tail starts: the stream's last id now. */
  async function start(): Promise<number> {
    const newest = (await conn.send(['XREVRANGE', keys.journal, '+', '-', 'COUNT', '1'])) as [string][];
    return newest.length === 0 ? 0 : streamSeq(newest[0]![0]);
  }

  return {
    async range(cap, since, upTo) {
      if (cap <= 0) return [];
      const end = upTo === undefined ? '+' : `0-${upTo}`;
      const begin = since === undefined || since <= 0 ? '-' : `(0-${since}`;
      const raw = (await conn.send(['XREVRANGE', keys.journal, end, begin, 'COUNT', String(cap)])) as unknown[];
      return parse(raw.reverse()).map((r) => r.entry);
    },
    async join(listener) {
      if (position === undefined || !running) {
        starting ??= start().finally(() => (starting = undefined));
        const at = await starting;
        if (!running) {
          position = at;
          live = true;
        }
      }
      const from = position as number;
      listeners.add(listener);
      if (!running) void loop();
      return { from, leave: () => void listeners.delete(listener) };
    },
    get live() {
      return live;
    },
    get highest() {
      return highest;
    },
  };
}
