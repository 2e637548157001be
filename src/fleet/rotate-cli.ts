import { randomBytes } from 'node:crypto';
import { silentLogger } from '../logger.js';
import { openBus } from './bus.js';
import { openFleetConnection } from './connection.js';
import { GONE_AFTER_MS, listHosts } from './hosts.js';
import { fleetKeys } from './keys.js';
import { CONFIRM_MS, rotationLines } from './rotate.js';

/**
 * `mockapi rotate-key` on a config of a fleet: after the file is rotated (and the servers of this
 * machine confirmed), every host registered in the fleet's Redis is asked to apply the same key to
 * its own file; answers the lines to print. A Redis that cannot be reached is a warning.
 */
export async function confirmOnFleet(
  url: string,
  project: string,
  key: string,
  name: string | undefined,
): Promise<string[]> {
  const conn = await openFleetConnection(url);
  try {
    if (!conn.up)
      return [
        "warning: the fleet's Redis cannot be reached: the hosts of the fleet on other machines may still accept the old key",
      ];
    const keys = fleetKeys(project);
    const { now, hosts } = await listHosts(conn, keys);
    const alive = hosts.filter((h) => now - h.seen <= GONE_AFTER_MS);
    if (alive.length === 0) return ["fleet: no host is registered in the fleet's Redis"];
    const bus = await openBus(
      conn,
      keys.channel,
      `rotate-key-${process.pid}-${randomBytes(2).toString('hex')}`,
      silentLogger,
    );
    const result = await bus.announce(
      { op: 'rotate', key, ...(name === undefined ? {} : { name }) },
      { timeoutMs: CONFIRM_MS, expect: alive.map((h) => h.id) },
    );
    return rotationLines(result, hosts, name === undefined ? 'apiKey' : `key ${name}`).map((line) =>
      line.replace(' other host', ' host'),
    );
  } finally {
    await conn.close();
  }
}
