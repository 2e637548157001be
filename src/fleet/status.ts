import { redactStoreUrl } from '../config/store-url.js';
import { openFleetConnection } from './connection.js';
import { GONE_AFTER_MS, listHosts, shortHash, type HostEntry } from './hosts.js';
import { fleetKeys } from './keys.js';

/** One host as `mockapi fleet status --json` shows it. */
export interface HostStatus {
  address: string;
  hostname: string;
  pid: number;
  version: string;
  /** sha256 of the config it serves. */
  config: string;
  /** ISO times on Redis's clock. */
  started: string;
  lastSeen: string;
  /** False when it has not said it is there for 10 s (stopped without a goodbye, or cut off from Redis). */
  alive: boolean;
}

export interface FleetStatus {
  project: string;
  store: string;
  hosts: HostStatus[];
  /** The distinct configs the live hosts serve. */
  configs: string[];
}

/** Reads the hosts registered in the fleet's Redis; rejects when Redis cannot be reached. */
export async function readFleetStatus(url: string, project: string): Promise<FleetStatus> {
  const conn = await openFleetConnection(url);
  try {
    if (!conn.up) throw new Error(`cannot reach the fleet's Redis ${redactStoreUrl(url)}`);
    const { now, hosts } = await listHosts(conn, fleetKeys(project));
    const shown = hosts.map((h: HostEntry): HostStatus => ({
      address: h.address,
      hostname: h.hostname,
      pid: h.pid,
      version: h.version,
      config: h.config,
      started: new Date(h.started).toISOString(),
      lastSeen: new Date(h.seen).toISOString(),
      alive: now - h.seen <= GONE_AFTER_MS,
    }));
    const configs = [...new Set(shown.filter((h) => h.alive).map((h) => h.config))];
    return { project, store: redactStoreUrl(url), hosts: shown, configs };
  } finally {
    await conn.close();
  }
}

/** The table `mockapi fleet status` prints, and the warnings for its stderr. */
export function formatFleetStatus(
  status: FleetStatus,
  now: number = Date.now(),
): { lines: string[]; warnings: string[] } {
  const alive = status.hosts.filter((h) => h.alive).length;
  const lines = [
    `fleet of ${status.project} through ${status.store}: ${alive} host${alive === 1 ? '' : 's'}${status.hosts.length > alive ? ` (and ${status.hosts.length - alive} gone)` : ''}`,
  ];
  if (status.hosts.length > 0) {
    const rows = [['ADDRESS', 'HOST', 'PID', 'VERSION', 'CONFIG', 'LAST SEEN']];
    for (const h of status.hosts)
      rows.push([
        h.address,
        h.hostname,
        String(h.pid),
        h.version,
        shortHash(h.config),
        `${ago(now - Date.parse(h.lastSeen))}${h.alive ? '' : ' (gone?)'}`,
      ]);
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    for (const row of rows)
      lines.push(
        row
          .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
          .join('  ')
          .trimEnd(),
      );
  }
  const warnings: string[] = [];
  if (status.configs.length > 1) {
    const by = status.configs.map((config) => {
      const hosts = status.hosts.filter((h) => h.alive && h.config === config).map((h) => h.address);
      return `${shortHash(config)} on ${hosts.join(', ')}`;
    });
    warnings.push(
      `warning: the hosts serve ${status.configs.length} different configs (${by.join('; ')}); stubs, resources and the journal are shared but the configs are not merged: give every host the same file`,
    );
  }
  const versions = new Set(status.hosts.filter((h) => h.alive).map((h) => h.version));
  if (versions.size > 1)
    warnings.push(`warning: the hosts run different versions of mockapi (${[...versions].join(', ')})`);
  return { lines, warnings };
}

function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  return `${Math.round(s / 3600)}h ago`;
}
