import type { ControlPlane } from '../control/control-plane.js';
import type { Announced, Bus } from './bus.js';
import type { HostEntry } from './hosts.js';

/** How long a rotation waits for the other hosts, as rotate-key waits for the servers of its file. */
export const CONFIRM_MS = 5000;

/** The lines rotate-key says about the hosts of a fleet, from what they answered. */
export function rotationLines(result: Announced, hosts: HostEntry[], label: string): string[] {
  const named = (id: string): string => {
    const host = hosts.find((h) => h.id === id);
    return host === undefined ? id : `${host.address} (${host.hostname}, pid ${host.pid})`;
  };
  const missing = Array.isArray(result.missing) ? result.missing : [];
  const asked = result.acked.length + result.failed.length + missing.length;
  const lines = [
    `fleet: ${result.acked.length} of ${asked} other host${asked === 1 ? '' : 's'} registered in the store confirmed the new ${label}`,
  ];
  for (const { host, error } of result.failed)
    lines.push(
      `warning: fleet host ${named(host)} could not rotate its config: ${error}; it may still accept the old key`,
    );
  for (const id of missing)
    lines.push(
      `warning: fleet host ${named(id)} did not confirm the new key within ${CONFIRM_MS / 1000}s; it may still accept the old key`,
    );
  return lines;
}

/**
 * Key rotation across a fleet: each host serves its own copy of the config, so a rotation made on
 * one host (or by `mockapi rotate-key`) is told to every host registered in the store, which applies
 * the same key to its own file (nothing to do when it is the same file) and answers once it serves
 * it. The key travels on the fleet's channel (never stored in Redis, never logged).
 */
export function createFleetRotation(
  bus: Bus,
  self: string,
  alive: () => Promise<HostEntry[]>,
  plane: () => ControlPlane | undefined,
) {
  const applying = new Set<string>(); // keys another host asked this one to apply: not told again
  bus.handle('rotate', async (change) => {
    const key = String(change.key);
    const name = typeof change.name === 'string' ? change.name : undefined;
    const here = plane();
    if (here === undefined) throw new Error('this host is not started');
    applying.add(key);
    try {
      await here.rotateKey(key, name);
    } finally {
      applying.delete(key);
    }
  });
  return {
    async keyRotated(key: string, name: string | undefined): Promise<string[]> {
      if (applying.has(key)) return [];
      const hosts = await alive();
      const others = hosts.filter((h) => h.id !== self).map((h) => h.id);
      if (others.length === 0) return [];
      const result = await bus.announce(
        { op: 'rotate', key, ...(name === undefined ? {} : { name }) },
        { timeoutMs: CONFIRM_MS, expect: others },
      );
      return rotationLines(result, hosts, name === undefined ? 'apiKey' : `key ${name}`);
    },
  };
}
