// The fleet's connection to its Redis, against a real redis-server: it counts as up (and tells the
// parts that catch up with the fleet's state) only once its subscription is held, so a change another
// host publishes right then is heard — at start with Redis away, and when only the subscriber
// connection was lost.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { openBus } from '../../src/fleet/bus.js';
import { openFleetConnection, type FleetConnection } from '../../src/fleet/connection.js';
import type { Logger } from '../../src/logger.js';
import { waitFor } from '../helpers/cli.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

const quiet: Logger = { info() {}, warn() {}, error() {} };
let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());
const opened: FleetConnection[] = [];
const stopAfter: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
  await Promise.all(stopAfter.splice(0).map((stop) => stop()));
});

async function open(name: string): Promise<FleetConnection> {
  const conn = await openFleetConnection(redis.url, name);
  opened.push(conn);
  return conn;
}

/** Subscribers of `channel` as Redis counts them, read the moment the connection says it is up. */
function subscribersAtUp(conn: FleetConnection, channel: string): Promise<string> {
  return new Promise((done) => {
    const stop = conn.onUp(() => {
      stop();
      done(redis.cli('PUBSUB', 'NUMSUB', channel).split('\n')[1]!);
    });
  });
}

describe("the fleet's connection", () => {
  test('with Redis away at start, it is up only once the subscription is made, and hears what is published then', async () => {
    await redis.kill();
    const conn = await open('conn-late');
    expect(conn.up).toBe(false);
    const heard: string[] = [];
    const bus = await openBus(conn, 'late-channel', 'late', quiet);
    bus.handle('note', (change) => void heard.push(String(change.text)));
    const atUp = subscribersAtUp(conn, 'late-channel');
    await redis.restart();
    expect(await atUp).toBe('1');
    expect(conn.up).toBe(true);
    redis.cli('PUBLISH', 'late-channel', JSON.stringify({ v: 1, from: 'other', change: { op: 'note', text: 'hi' } }));
    await waitFor(() => heard.length === 1, 10_000, 20);
    expect(heard).toEqual(['hi']);
  }, 30_000);

  test('a lost subscriber connection makes it away, and up again once the subscription is back', async () => {
    const conn = await open('conn-sub');
    await openBus(conn, 'sub-channel', 'sub', quiet);
    expect(conn.up).toBe(true);
    const reasons: string[] = [];
    conn.onDown((reason) => reasons.push(reason));
    const atUp = subscribersAtUp(conn, 'sub-channel');
    redis.cli('CLIENT', 'KILL', 'TYPE', 'pubsub');
    expect(await atUp).toBe('1');
    expect(reasons.length).toBe(1);
    expect(conn.up).toBe(true);
  }, 30_000);

  test('a message its bus cannot read takes nothing down: it is noted, and the next one is heard', async () => {
    const conn = await open('conn-bad');
    const warnings: string[] = [];
    const heard: string[] = [];
    const bus = await openBus(conn, 'bad-channel', 'bad', { ...quiet, warn: (m) => void warnings.push(m) });
    bus.handle('note', (change) => void heard.push(String(change.text)));
    const reasons: string[] = [];
    conn.onDown((reason) => reasons.push(reason));
    redis.cli('PUBLISH', 'bad-channel', '{"v":1,"from":{"toString":1,"valueOf":1},"change":{"op":"x"}}');
    redis.cli('PUBLISH', 'bad-channel', '{"v":1,"from":"other","change":{"op":{"toString":1,"valueOf":1}}}');
    redis.cli('PUBLISH', 'bad-channel', JSON.stringify({ v: 1, from: 'other', change: { op: 'note', text: 'after' } }));
    await waitFor(() => heard.length === 1, 10_000, 20);
    expect(heard).toEqual(['after']);
    expect(reasons).toEqual([]);
    expect(conn.up).toBe(true);
    expect(warnings).toEqual([
      'fleet: skipped a message on the fleet channel from no host it names',
      'fleet: skipped a message on the fleet channel it could not read (Cannot convert object to primitive value)',
    ]);
  }, 30_000);

  test('a subscription Redis refuses is said with its reason, and made once it is allowed', async () => {
    // (on TCP: a user and password in the URL)
    const tcp = await startRedis({ tcp: true });
    stopAfter.push(() => tcp.stop());
    tcp.cli('ACL', 'SETUSER', 'nopub', 'on', '>pw', '~*', '+@all', 'resetchannels');
    const url = tcp.url.replace('redis://', 'redis://nopub:pw@');
    const conn = await openFleetConnection(url, 'conn-noperm');
    opened.push(conn);
    const reasons: string[] = [];
    conn.onDown((reason) => reasons.push(reason));
    await openBus(conn, 'perm-channel', 'perm', quiet);
    expect(conn.up).toBe(false);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(/^the subscription to the fleet's channel was refused: NOPERM/);
    tcp.cli('ACL', 'SETUSER', 'nopub', 'allchannels');
    await waitFor(() => conn.up, 10_000, 20);
    expect(tcp.cli('PUBSUB', 'NUMSUB', 'perm-channel').split('\n')[1]).toBe('1');
  }, 30_000);
});
