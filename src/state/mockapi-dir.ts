import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-write.js';

/** Name of the folder beside the config that holds usage state and the running-server registry. */
export const MOCKAPI_DIR = '.mockapi';

const GITIGNORE = '# written by mockapi: local state, never committed\n*\n';

/**
 * Makes sure `<dir>/.mockapi/` exists with a `.gitignore` that ignores everything in it, so state
 * and registry entries are never committed. Returns the folder's path.
 *
 * The `.gitignore` is written atomically, and rewritten when it is empty: a write cut short (a
 * full disk, a kill) must not leave an empty file that would let state be committed for ever.
 * A non-empty one is left as it is.
 */
export async function ensureMockapiDir(dir: string): Promise<string> {
  const path = join(dir, MOCKAPI_DIR);
  await mkdir(path, { recursive: true });
  const file = join(path, '.gitignore');
  const size = await stat(file).then(
    (s) => s.size,
    () => 0,
  );
  if (size === 0) await writeFileAtomic(file, GITIGNORE);
  return path;
}
