import { mkdir, readFile, rename } from 'node:fs/promises';
import type { Logger } from '../logger.js';
import { writeFileAtomic } from '../state/atomic-write.js';
import { ensureMockapiDir } from '../state/mockapi-dir.js';
import { caPaths, ensureProjectCa } from '../tls/project-ca.js';
import type { FleetConnection } from './connection.js';
import type { FleetKeys } from './keys.js';

/**
 * One HTTPS CA for the whole fleet, made once: the first host that needs one offers its project CA
 * (`.mockapi/tls/`, made if missing) to Redis; every other host takes the one Redis holds and puts
 * it in its own `.mockapi/tls/` (a different local CA is kept beside it, renamed), so every host's
 * certificates chain to it and `mockapi tls env` on any machine names it. The CA's private key is
 * then in Redis: whoever can read that Redis can sign certificates its clients trust (a mock's CA
 * for tests, never a real one).
 */
export async function shareCa(
  conn: FleetConnection,
  keys: FleetKeys,
  configDir: string,
  logger: Logger,
): Promise<void> {
  if (!conn.up) {
    logger.warn(
      `fleet: Redis is away; this host's HTTPS certificate chains to its own CA (.mockapi/tls/), not the fleet's`,
    );
    return;
  }
  let shared = await conn.send(['GET', keys.ca]);
  if (typeof shared !== 'string') {
    const own = await ensureProjectCa(configDir);
    const text = await readFile(own.keyFile, 'utf8');
    if ((await conn.send(['SET', keys.ca, text, 'NX'])) !== null) return; // this host's CA is the fleet's now
    shared = await conn.send(['GET', keys.ca]); // another host's came first
  }
  if (typeof shared === 'string') await install(configDir, shared, logger);
}

/** Puts the fleet's CA key file in `.mockapi/tls/` (ensureProjectCa then writes ca.pem from it). */
async function install(configDir: string, keyFileText: string, logger: Logger): Promise<void> {
  const paths = caPaths(configDir);
  const local = await readFile(paths.keyFile, 'utf8').catch(() => undefined);
  if (local === keyFileText) return;
  await ensureMockapiDir(configDir);
  await mkdir(paths.dir, { recursive: true, mode: 0o700 });
  if (local !== undefined) {
    const aside = `${paths.keyFile}.before-fleet-${Date.now()}`;
    // Another process of this folder (a worker of `serve --workers`) may be doing the same: its rename wins.
    const moved = await rename(paths.keyFile, aside).then(
      () => true,
      (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? false : Promise.reject(err)),
    );
    if (moved)
      logger.warn(
        `fleet: this host's own CA is replaced by the fleet's (kept as ${aside}); clients that trusted the old one must trust the new one (mockapi tls env)`,
      );
  }
  await writeFileAtomic(paths.keyFile, keyFileText, { mode: 0o600 });
}

/** `serve --workers` with a fleet: the primary takes the fleet's CA before it makes the certificate the workers read. */
export async function shareCaOnce(url: string, project: string, configDir: string, logger: Logger): Promise<void> {
  const { openFleetConnection } = await import('./connection.js');
  const { fleetKeys } = await import('./keys.js');
  const conn = await openFleetConnection(url);
  try {
    await shareCa(conn, fleetKeys(project), configDir, logger);
  } finally {
    await conn.close();
  }
}
