import { rotateKeyFile, type RotateKeyDeps, type RotateKeyOptions } from '../../control/rotate-key.js';
import { EXIT_FAILURE, EXIT_OK, type CommandIO } from './io.js';

export type { RotateKeyDeps, RotateKeyOptions };

/**
 * `mockapi rotate-key`: the rotation of control/rotate-key.ts, with the new key alone on stdout
 * (`KEY=$(mockapi rotate-key)` works) and every message on stderr. Exit 1 when the key was not
 * rotated (the file, with any edit, left as it is); exit 0 once it is, even when a server did not
 * confirm (it is named in a warning).
 */
export async function runRotateKey(opts: RotateKeyOptions, io: CommandIO, deps: RotateKeyDeps = {}): Promise<number> {
  const rotated = await rotateKeyFile(opts, io, deps);
  if (rotated === undefined) return EXIT_FAILURE;
  io.out(rotated.key);
  return EXIT_OK;
}
