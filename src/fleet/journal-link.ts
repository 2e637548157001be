import type { ControlPlane } from '../control/control-plane.js';
import type { ClientReport } from '../control/early-retries.js';
import type { FleetLink } from '../control/fleet-link.js';
import { viewEntry, type JournalEntry } from '../control/journal-entry.js';
import { matchesFilter, type Journal, type RequestFilter } from '../control/journal.js';
import type { HubOp, OtherWorkers } from '../control/other-workers.js';
import { waitForEntries } from '../control/wait.js';
import { FleetStoreError, pairsOf, type FleetConnection } from './connection.js';
import type { FleetKeys } from './keys.js';
import type { Bus } from './bus.js';
import type { JournalSink } from './journal-sink.js';
import type { JournalReader } from './journal-read.js';
import { asRaw, waitAcrossHosts } from './journal-wait.js';
import { mirrored } from '../workers/hub.js';

/** What the link needs besides the journal: the fleet's parts that a reset or a clock move reaches. */
export interface LinkParts {
  conn: FleetConnection;
  keys: FleetKeys;
  bus: Bus;
  sink: JournalSink;
  reader: JournalReader;
  /** Runs `work` as a change another host made (what it changes here is not told again). */
  asRemote<T>(work: () => T): T;
  /** The shared parts a reset clears in Redis (stubs, scenarios), each given the reset's parts; `afterReset` once every host reset (the clock). */
  onReset: ((parts: Record<string, boolean>) => Promise<void>)[];
  afterReset: ((parts: Record<string, boolean>) => Promise<void>)[];
  /** The clock's share (set by the clock part). */
  clockMoved(now: number): Promise<void>;
  keyRotated(key: string, name: string | undefined): Promise<string[]>;
  /** A `serve --workers` worker's hub: the early retries stay per worker, gathered through it. */
  workers?: Pick<OtherWorkers, 'clients'>;
}

/**
 * The control plane's link of a fleet host: reads of the journal (queries, counts, waits, event
 * streams) come from the fleet's stream — every host's entries, one order, the fleet's ids — and
 * writes (clear, reset, scenarios) apply on every host before the call answers. While Redis is
 * away, the journal of this host answers on its own.
 */
export function createJournalLink(p: LinkParts): FleetLink {
  let journal: Journal | undefined;
  let plane: ControlPlane | undefined;
  // The journal's ids: never below what the fleet gave, so a host whose Redis went away goes on above them.
  let counter = 0;
  const raise = (id: number): void => void (counter = Math.max(counter, id));
  p.sink.onWritten(raise);
  let watchers = 0;
  let stopWatching: (() => void) | undefined;

  const capacity = (): number => journal?.capacity ?? 0;
  const local = (filter: RequestFilter): JournalEntry[] =>
    journal === undefined ? [] : journal.list(filter).map(viewEntry);
  async function read(filter: RequestFilter): Promise<JournalEntry[] | undefined> {
    if (!p.conn.up) return undefined;
    await p.sink.flush();
    try {
      const entries = (await p.reader.range(capacity(), filter.since)).filter((e) =>
        matchesFilter(asRaw(e), { ...filter, limit: undefined }),
      );
      raise(p.reader.highest);
      return filter.limit === undefined || entries.length <= filter.limit
        ? entries
        : entries.slice(entries.length - filter.limit);
    } catch {
      return undefined; // Redis went away meanwhile: this host's own journal answers
    }
  }
  async function clearShared(): Promise<void> {
    await p.sink.flush();
    if (p.conn.up)
      await Promise.all([
        p.conn.send(['XTRIM', p.keys.journal, 'MAXLEN', '0']),
        p.conn.send(['DEL', p.keys.counts, p.keys.answers]),
      ]).catch(() => {});
  }

  p.bus.handle('journal-clear', () => journal?.clear());
  p.bus.handle('reset', (change) => void p.asRemote(() => plane?.resetHere(change.parts as Record<string, boolean>)));
  p.bus.handle(
    'scenario',
    (change) => void p.asRemote(() => plane?.setScenario(String(change.name), String(change.state))),
  );

  return {
    ids: { next: () => ++counter },
    attach(j, cp) {
      journal = j;
      plane = cp;
      // This host's entries go to the fleet's stream, at the end of each loop turn.
      j.listen((entry, heard) => {
        if (!heard) p.sink.add(entry);
      });
    },
    async requests(filter) {
      return (await read(filter)) ?? local(filter);
    },
    async count(filter) {
      return ((await read({ ...filter, limit: undefined })) ?? local({ ...filter, limit: undefined })).length;
    },
    async endpointCounts() {
      if (p.conn.up) {
        await p.sink.flush();
        const replies = await Promise.all([
          p.conn.send(['HGETALL', p.keys.counts]),
          p.conn.send(['HGETALL', p.keys.answers]),
        ]).catch(() => undefined);
        if (replies !== undefined)
          return {
            endpoints: new Map(pairsOf(replies[0]).map(([endpoint, n]) => [endpoint, Number(n)])),
            answers: answersOf(pairsOf(replies[1])),
          };
      }
      return { endpoints: new Map(journal?.endpointCounts() ?? []) };
    },
    async waitFor(filter, options, signal) {
      if (journal !== undefined && p.conn.up) {
        await p.sink.flush();
        try {
          return await waitAcrossHosts(p.reader, capacity(), filter, options, signal);
        } catch (err) {
          if (!(err instanceof FleetStoreError)) throw err; // Redis away or hanging: this host's journal answers
        }
      }
      return waitForEntries(journal as Journal, filter, options, signal);
    },
    async watch() {
      // One listener for every event stream of this host: each entry is heard once.
      if (watchers++ === 0 && p.conn.up) {
        const joined = await p.reader.join((entry) => journal?.hear(mirrored(entry))).catch(() => undefined);
        stopWatching = joined?.leave;
      }
      let left = false;
      return () => {
        if (left) return;
        left = true;
        if (--watchers === 0) {
          stopWatching?.();
          stopWatching = undefined;
        }
      };
    },
    async others(op: HubOp) {
      if (op.op === 'clear') {
        await clearShared();
        await p.bus.announce({ op: 'journal-clear' });
      } else if (op.op === 'reset') {
        const parts = op.parts as Record<string, boolean>;
        if (parts.journal !== false) await clearShared();
        await Promise.all(p.onReset.map((reset) => reset(parts)));
        await p.bus.announce({ op: 'reset', parts });
        for (const after of p.afterReset) await after(parts);
      } else if (op.op === 'scenario') {
        await p.bus.announce({ op: 'scenario', name: op.name, state: op.state });
      }
    },
    clients: async (): Promise<ClientReport[][]> => (p.workers === undefined ? [] : p.workers.clients()),
    hearsAll: () => stopWatching !== undefined && p.reader.live && p.conn.up,
    clockMoved: (now) => p.clockMoved(now),
    keyRotated: (key, name) => p.keyRotated(key, name),
  };
}

/** The answers' counts of the fleet (fields `<endpoint>\0<answer>`, see journal-script.ts), by endpoint. */
function answersOf(pairs: readonly [string, string][]): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const [field, n] of pairs) {
    const at = field.indexOf('\0');
    if (at === -1) continue;
    const endpoint = field.slice(0, at);
    let byName = out.get(endpoint);
    if (byName === undefined) out.set(endpoint, (byName = new Map()));
    byName.set(field.slice(at + 1), Number(n));
  }
  return out;
}
