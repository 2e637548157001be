import {
  rotateKeyFile,
  type ConfirmedElsewhere,
  type RotateKeyDeps,
  type RotateKeyOptions,
} from '../../control/rotate-key.js';
import { EXIT_FAILURE, EXIT_OK, type CommandIO } from './io.js';
import { loadConfig } from '../../config/load.js';

export type { RotateKeyDeps, RotateKeyOptions };

/**
 * `mockapi rotate-key`: the rotation of control/rotate-key.ts, with the new key alone on stdout
 * (`KEY=$(mockapi rotate-key)` works) and every message on stderr. Exit 1 when the key was not
 * rotated (the file, with any edit, left as it is); exit 0 once it is, even when a server did not
 * confirm (it is named in a warning).
 */
export async function runRotateKey(opts: RotateKeyOptions, io: CommandIO, deps: RotateKeyDeps = {}): Promise<number> {
  const rotated = await rotateKeyFile(opts, io, {
    confirmElsewhere: (key) => confirmOnFleetOf(opts, key),
    ...deps,
  });
  if (rotated === undefined) return EXIT_FAILURE;
  io.out(rotated.key);
  return EXIT_OK;
}

/**
 * A config of a fleet: every host registered in its Redis applies the key to its own file and
 * confirms, a host of this machine started with `--no-watch` too (it is then counted among the
 * running servers that confirmed, not warned about).
 */
async function confirmOnFleetOf(opts: RotateKeyOptions, key: string): Promise<ConfirmedElsewhere> {
  const loaded = await loadConfig(opts.config);
  const fleet = loaded.ok && loaded.config.fleet?.url ? loaded.config : undefined;
  if (fleet?.fleet === undefined) return { confirms: () => false, lines: [] };
  const { confirmOnFleet } = await import('../../fleet/rotate-cli.js');
  return confirmOnFleet(fleet.fleet.url, fleet.project, key, opts.name);
}
