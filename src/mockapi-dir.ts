import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Name of the folder beside the config that holds usage state and the running-server registry. */
export const MOCKAPI_DIR = '.mockapi';

/**
 * Makes sure `<dir>/.mockapi/` exists with a `.gitignore` that ignores everything in it, so state
 * and registry entries are never committed. Returns the folder's path.
 */
export async function ensureMockapiDir(dir: string): Promise<string> {
  const path = join(dir, MOCKAPI_DIR);
  await mkdir(path, { recursive: true });
  await writeFile(join(path, '.gitignore'), '# written by mockapi: local state, never committed\n*\n', { flag: 'wx' }).catch(
    (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    },
  );
  return path;
}
