import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { ConfirmedElsewhere } from '../control/rotate-key.js';
import { silentLogger } from '../logger.js';
import { openBus } from './bus.js';
import { openFleetConnection } from './connection.js';
import { GONE_AFTER_MS, listHosts, type HostEntry } from './hosts.js';
import { fleetKeys } from './keys.js';
import { CONFIRM_MS, rotationLines } from './rotate.js';

const nothingConfirmed = (lines: string[]): ConfirmedElsewhere => ({ confirms: () => false, lines });

/**
 * `mockapi rotate-key` on a config of a fleet: after the file is rotated (and the servers of this
 * machine that watch it confirmed), every host registered in the fleet's Redis is asked to apply the
 * same key to its own file; answers the lines to print, and which running servers of this machine
 * are hosts that confirmed (a host started with `--no-watch` serves the key all the same). A Redis
 * that cannot be reached is a warning.
 */
export async function confirmOnFleet(
  url: string,
  project: string,
  key: string,
  name: string | undefined,
): Promise<ConfirmedElsewhere> {
  const conn = await openFleetConnection(url);
  try {
    if (!conn.up)
      return nothingConfirmed([
        "warning: the fleet's Redis cannot be reached: the hosts of the fleet on other machines may still accept the old key",
      ]);
    const keys = fleetKeys(project);
    const { now, hosts } = await listHosts(conn, keys);
    const alive = hosts.filter((h) => now - h.seen <= GONE_AFTER_MS);
    if (alive.length === 0) return nothingConfirmed(["fleet: no host is registered in the fleet's Redis"]);
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
    const acked = new Set(result.acked);
    const here = hostname();
    // A host of this machine is the server registered with its pid and address.
    const confirmedHere = hosts.filter((h) => acked.has(h.id) && h.hostname === here);
    return {
      confirms: (server) => confirmedHere.some((h: HostEntry) => h.pid === server.pid && h.address === server.url),
      lines: rotationLines(result, hosts, name === undefined ? 'apiKey' : `key ${name}`).map((line) =>
        line.replace(' other host', ' host'),
      ),
    };
  } finally {
    await conn.close();
  }
}
