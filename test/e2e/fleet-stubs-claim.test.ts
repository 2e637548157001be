// A stub's `times` counted in the fleet's Redis (src/fleet/stubs.ts), two hosts on a real
// redis-server: once one host took the last answer, the other never answers with the stub again —
// even before it heard that the stub is gone (the taking host tells the others without waiting).
// CI found a fifth answer of a `times: 4` stub across three hosts: the script said "Redis does not
// hold this stub" and the host counted it alone, as if it had been added while Redis was away.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openFleetConnection, type FleetConnection } from '../../src/fleet/connection.js';
import { createFleetStubs } from '../../src/fleet/stubs.js';
import { fleetKeys } from '../../src/fleet/keys.js';
import type { Bus } from '../../src/fleet/bus.js';
import type { StubStore } from '../../src/stubs/store.js';
import { silentLogger } from '../../src/logger.js';
import { hasRedisServer, startRedis, type RedisServer } from '../helpers/redis.js';

/** A bus that delivers nothing: the other host has not heard yet. */
function deafBus(): Bus & { told: unknown[] } {
  const told: unknown[] = [];
  return {
    told,
    announce: async () => ({ acked: [], failed: [], missing: [] }),
    tell: (change) => void told.push(change),
    handle: () => {},
  };
}

describe.runIf(hasRedisServer())("a stub's times across hosts, on a real Redis", () => {
  let redis: RedisServer;
  const conns: FleetConnection[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    for (const name of ['host-a', 'host-b']) conns.push(await openFleetConnection(redis.url, name));
  });
  afterAll(async () => {
    for (const conn of conns) await conn.close();
    await redis?.stop();
  });

  /** A host's share of the fleet's stubs (its own store is not read by these calls). */
  function host(conn: FleetConnection, bus: Bus) {
    const stubs = createFleetStubs(conn, fleetKeys('claims'), bus, silentLogger);
    return stubs.share(async () => {}, {} as StubStore);
  }

  test('the last answer taken on one host: the other, not told yet, gets none (and the taker told the others)', async () => {
    const busA = deafBus();
    const a = host(conns[0]!, busA);
    const b = host(conns[1]!, deafBus());
    const record = { id: 'stub0001', seq: 0, name: null, endpoint: { method: 'GET', path: '/two' }, times: 2 };
    await a.replicate({ op: 'stub-add', record });
    expect(await b.claim('stub0001', 2)).toBe(1);
    expect(await a.claim('stub0001', 2)).toBe(0); // the last one: Redis drops the stub
    expect(busA.told).toEqual([{ op: 'stub', change: { op: 'stub-remove', id: 'stub0001' } }]);
    // B still holds its copy (one answer left, as it counted): Redis's word wins.
    expect(await b.claim('stub0001', 1)).toBeNull();
    expect(await a.claim('stub0001', 1)).toBeNull();
  });

  test("a take of Redis's stubs keeps a stub heard while its read was in flight, and does not put back one removed meanwhile", async () => {
    // CI saw a host lose a stub added on another host just as it caught up: the take's snapshot
    // (read before the add) dropped the copy the add's message had just made.
    const handlers = new Map<string, (message: { change: unknown }) => unknown>();
    const bus: Bus = {
      announce: async () => ({ acked: [], failed: [], missing: [] }),
      tell: () => {},
      handle: (op, fn) => void handlers.set(op, fn as unknown as (message: { change: unknown }) => unknown),
    };
    const stubs = createFleetStubs(conns[1]!, fleetKeys('takes'), bus, silentLogger);
    const held = new Map<string, { id: string; seq: number }>();
    const own = {
      list: () => [...held.values()].map((r) => ({ id: r.id })),
      record: (id: string) => held.get(id),
    } as unknown as StubStore;
    stubs.share(async (change) => {
      if (change.op === 'stub-add') held.set(change.record.id, change.record);
      else if (change.op === 'stub-remove') held.delete(change.id);
    }, own);
    // In Redis before the take: `kept`, which another host removes while the take reads.
    const writer = createFleetStubs(conns[0]!, fleetKeys('takes'), deafBus(), silentLogger).share(
      async () => {},
      {} as StubStore,
    );
    const kept = { id: 'stub0003', seq: 0, name: null, endpoint: { method: 'GET', path: '/kept' }, times: null };
    await writer.replicate({ op: 'stub-add', record: kept });
    const late = { id: 'stub0004', seq: 0, name: null, endpoint: { method: 'GET', path: '/late' }, times: null };
    const taking = stubs.catchUp(); // its read of Redis is on its way
    await handlers.get('stub')!({ change: { op: 'stub-add', record: late } });
    await handlers.get('stub')!({ change: { op: 'stub-remove', id: kept.id } });
    await taking;
    expect([...held.keys()]).toEqual(['stub0004']);
  });

  test('a stub Redis never held (added on this host while Redis was away) is counted here', async () => {
    const a = host(conns[0]!, deafBus());
    const record = { id: 'stub0002', seq: 0, name: null, endpoint: { method: 'GET', path: '/alone' }, times: 2 };
    await conns[0]!.close(); // Redis away for this host: the stub is added here alone
    await a.replicate({ op: 'stub-add', record });
    expect(await a.claim('stub0002', 2)).toBe(1);
    conns[0] = await openFleetConnection(redis.url, 'host-a');
  });
});
