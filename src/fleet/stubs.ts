import type { Logger } from '../logger.js';
import type { StubChange, StubShare } from '../stubs/index.js';
import { StubInvalidError } from '../stubs/stub-error.js';
import type { StubRecord, StubStore } from '../stubs/store.js';
import { pairsOf, type FleetConnection } from './connection.js';
import { ADD, CLAIM, readRecord, REMOVE, UNANSWERED } from './stub-scripts.js';
import type { Bus } from './bus.js';
import type { Refill } from './generation.js';
import type { FleetKeys } from './keys.js';

/** What one take of Redis's stubs heard or made meanwhile (see `takes`). */
interface Seen {
  readonly added: Set<string>;
  readonly removed: Set<string>;
  cleared: boolean;
}

/**
 * The run-time stubs of a fleet: each stub is kept in Redis (its record, its order, its `times`
 * left) and every host serves it from a copy of its own; a change is told on the fleet's channel and
 * the call answers once every host applied it. `times` is counted in Redis (one script per answer
 * of such a stub), exact across hosts, and so are hits (in that script; for a stub without `times`,
 * one HINCRBY per answer, not waited for). While Redis is away a host adds and removes stubs on its own;
 * when it is back, those changes go to Redis and the host takes what the others did meanwhile.
 */
export function createFleetStubs(conn: FleetConnection, keys: FleetKeys, bus: Bus, logger: Logger) {
  let store: StubStore | undefined;
  let apply: ((change: StubChange) => Promise<void>) | undefined;
  // Changes made here while Redis was away, sent when it is back.
  const addedAlone = new Set<string>();
  const removedAlone = new Set<string>();
  let clearedAlone = false;
  const k3 = [keys.stubs, keys.stubLeft, keys.stubNames];
  const k4 = [...k3, keys.stubHits];
  // The changes heard or made while a take of Redis's stubs is in flight: its snapshot may be older
  // than them (a stub added on another host just after the read), so the take neither removes what
  // was added since nor puts back what was removed since.
  const takes = new Set<Seen>();
  const seen = (change: StubChange): void => {
    for (const take of takes)
      if (change.op === 'stub-add') take.added.add(change.record.id);
      else if (change.op === 'stub-remove') take.removed.add(change.id);
      else take.cleared = true;
  };

  async function add(record: StubRecord): Promise<void> {
    seen({ op: 'stub-add', record });
    const answer = (await conn.run(
      ADD,
      [...k3, keys.stubSeq],
      [
        record.id,
        JSON.stringify({ ...record, seq: undefined }),
        record.name ?? '',
        record.times === null ? '' : String(record.times),
      ],
    )) as [string, string | number];
    if (answer[0] === 'name') {
      await apply?.({ op: 'stub-remove', id: record.id });
      throw new StubInvalidError([
        {
          path: '/name',
          message: `is the name of stub ${String(answer[1])} already (added on another host of the fleet)`,
        },
      ]);
    }
    const seq = Number(answer[1]);
    if (seq !== record.seq) {
      // The fleet's order: the stub takes its place among every host's stubs.
      await apply?.({ op: 'stub-remove', id: record.id });
      await apply?.({ op: 'stub-add', record: { ...record, seq } });
    }
    await bus.announce({ op: 'stub', change: { op: 'stub-add', record: { ...record, seq } } });
  }

  async function remove(id: string): Promise<void> {
    seen({ op: 'stub-remove', id });
    await conn.run(REMOVE, k4, [id]);
    await bus.announce({ op: 'stub', change: { op: 'stub-remove', id } });
  }

  async function clear(): Promise<void> {
    seen({ op: 'stub-clear' });
    await Promise.all(k4.map((key) => conn.send(['DEL', key])));
    await bus.announce({ op: 'stub', change: { op: 'stub-clear' } });
  }

  // A stub this host cannot serve is said once (a host takes the stubs again at each reconnection).
  const skipped = new Set<string>();
  const skip = (id: string, why: string): void => {
    if (skipped.has(id)) return;
    skipped.add(id);
    logger.warn(`fleet: skipped stub ${id} kept in the fleet's Redis: ${why}`);
  };

  /** Takes every stub Redis holds, in the fleet's order; drops the copies of stubs Redis no longer has. */
  async function takeShared(own: StubStore, applyHere: (change: StubChange) => Promise<void>): Promise<void> {
    const take: Seen = { added: new Set(), removed: new Set(), cleared: false };
    takes.add(take);
    try {
      await takeSnapshot(own, applyHere, take);
    } finally {
      takes.delete(take);
    }
  }

  async function takeSnapshot(
    own: StubStore,
    applyHere: (change: StubChange) => Promise<void>,
    take: Seen,
  ): Promise<void> {
    const records = new Map<string, StubRecord>();
    for (const [id, value] of pairsOf(await conn.send(['HGETALL', keys.stubs]))) {
      const record = readRecord(value);
      if (record !== undefined) records.set(record.id, record);
      else skip(id, 'it is damaged, or in a format this version of mockapi does not read');
    }
    for (const info of own.list())
      if (!records.has(info.id) && !addedAlone.has(info.id) && !take.added.has(info.id))
        await applyHere({ op: 'stub-remove', id: info.id });
    for (const record of [...records.values()].sort((a, b) => a.seq - b.seq)) {
      if (take.cleared || take.removed.has(record.id)) continue;
      if (own.record(record.id) !== undefined) continue;
      await applyHere({ op: 'stub-add', record }).catch((err: Error) =>
        skip(
          record.name ?? record.id,
          `this host cannot serve it (${err.message.replace(/\s*\n\s*/g, ' ')}); it was added by another version of mockapi, or a host with another config`,
        ),
      );
    }
  }

  /** Sends what was changed here while Redis was away, then takes every stub Redis holds. */
  async function catchUp(): Promise<void> {
    if (store === undefined || apply === undefined || !conn.up) return;
    const shared = addedAlone.size + removedAlone.size + (clearedAlone ? 1 : 0);
    if (clearedAlone) await clear();
    clearedAlone = false;
    for (const id of removedAlone) await remove(id);
    removedAlone.clear();
    for (const id of [...addedAlone]) {
      const record = store.record(id);
      // Counted here until Redis holds it (a claim meanwhile would find Redis without it).
      if (record !== undefined)
        await add(record).catch((err: Error) =>
          logger.warn(`fleet: stub ${record.name ?? id}, added while Redis was away, is removed: ${err.message}`),
        );
      addedAlone.delete(id);
    }
    await takeShared(store, apply);
    if (shared > 0)
      logger.info(
        `fleet: Redis is back; shared ${shared} stub change${shared === 1 ? '' : 's'} made on this host while it was away`,
      );
  }

  /** The fleet's stubs this host serves, put back in a Redis that restarted without them (generation.ts). */
  function held(): Refill[] {
    const out: Refill[] = [];
    let top = 0;
    for (const info of store?.list() ?? []) {
      const record = store?.record(info.id);
      if (record === undefined || addedAlone.has(record.id)) continue; // (catchUp sends those)
      const json = JSON.stringify({ ...record, seq: undefined });
      out.push({ op: 'hash', key: keys.stubs, field: record.id, value: `${record.seq} ${json}` });
      if (info.remaining !== null)
        out.push({ op: 'hash', key: keys.stubLeft, field: record.id, value: String(info.remaining) });
      if (record.name) out.push({ op: 'hash', key: keys.stubNames, field: record.name, value: record.id });
      top = Math.max(top, record.seq);
    }
    if (top > 0) out.push({ op: 'atLeast', key: keys.stubSeq, value: top });
    return out;
  }

  bus.handle('stub', (change) => {
    seen(change.change as StubChange);
    return apply?.(change.change as StubChange);
  });
  conn.onUp(
    () =>
      void catchUp().catch((err: Error) =>
        logger.warn(`fleet: could not take the fleet's stubs again: ${err.message}`),
      ),
  );

  return {
    /** Takes every stub the fleet has (at start, before the host answers). */
    catchUp,
    held,
    /** The share `createStubs` is given. */
    share(applyHere: (change: StubChange) => Promise<void>, own: StubStore): StubShare {
      apply = applyHere;
      store = own;
      return {
        async replicate(change) {
          try {
            if (!conn.up) throw new Error('away');
            if (change.op === 'stub-add') await add(change.record);
            else if (change.op === 'stub-remove') await remove(change.id);
            else await clear();
          } catch (err) {
            if (err instanceof StubInvalidError) throw err;
            // Redis away (or too slow): this host's change is made here alone, and sent once it is back.
            if (change.op === 'stub-add') addedAlone.add(change.record.id);
            else if (change.op === 'stub-remove') {
              if (!addedAlone.delete(change.id)) removedAlone.add(change.id);
            } else {
              clearedAlone = true;
              addedAlone.clear();
              removedAlone.clear();
            }
          }
        },
        async claim(id, remaining) {
          if (conn.up && !addedAlone.has(id)) {
            const left = Number(await conn.run(CLAIM, k4, [id]).catch(() => UNANSWERED));
            if (left >= 0) {
              if (left === 0) bus.tell({ op: 'stub', change: { op: 'stub-remove', id } });
              return left;
            }
            // None left, or gone from the fleet: another host may have taken the last answer and
            // told the others (not waiting for them), and this host not heard it yet.
            if (left === -1 || left === -2) return null;
          }
          // Redis away (or too slow), or the stub added here while it was: counted here alone.
          return remaining > 0 ? remaining - 1 : null;
        },
        hit(id) {
          // Not waited for: written at the end of the turn that makes the answer, as the journal's call
          // (journal-sink.ts), so a list another host makes after the answer counts it. Lost while Redis is away (the host
          // counts it alone); one that races a removal leaves a field no stub reads (a clear drops it).
          if (conn.up && !addedAlone.has(id)) void conn.send(['HINCRBY', keys.stubHits, id, '1']).catch(() => {});
        },
        async hits() {
          // Redis away: empty, each host's own count shows.
          return new Map(
            pairsOf(await conn.send(['HGETALL', keys.stubHits]).catch(() => [])).map(([id, n]) => [id, Number(n)]),
          );
        },
        async counts() {
          const counts = new Map(
            pairsOf(await conn.send(['HGETALL', keys.stubLeft]).catch(() => [])).map(([id, n]) => [id, Number(n)]),
          );
          // Stubs Redis does not count (added while it was away) keep this host's count.
          for (const info of own.list())
            if (info.remaining !== null && !counts.has(info.id)) counts.set(info.id, info.remaining);
          return counts;
        },
        close() {},
      };
    },
    /** A reset's part `stubs`: Redis's stubs go too (each host clears its own copy). */
    async reset(parts: Record<string, boolean>): Promise<void> {
      if (parts.stubs !== false && conn.up) await Promise.all(k4.map((key) => conn.send(['DEL', key])));
    },
  };
}
