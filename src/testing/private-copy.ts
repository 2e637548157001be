import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';

/** A config copied where a test may change it (rotate its key) without touching the original. */
export interface PrivateCopy {
  /** The copy's path. */
  readonly file: string;
  /** The original's folder, which the entries beside the copy link to. */
  readonly linkedFolder: string;
  /** Writes the original's bytes over the copy again; true when the copy had changed. */
  restore(): Promise<boolean>;
  /** Removes the copy and its folder. */
  remove(): Promise<void>;
}

const CONFIG_NAME = 'mockapi.yaml';
/** What the copy's folder never links to: the original's state and registry, and the config itself. */
const NOT_LINKED = new Set(['.mockapi']);

/**
 * Copies a config file (or writes a config object, as JSON, which is YAML) into a fresh temporary
 * folder. Everything else in the original's folder (`fixtures/`, body files) is linked there, so
 * relative `bodyFile` paths read the same files; what the server writes (a rotated key, the
 * registry under `.mockapi/`) goes into the temporary folder. A `bodyFile` that climbs out of the
 * config's folder (`../x.json`) is not reachable from the copy.
 */
export async function privateCopy(config: string | Record<string, unknown>, cwd = process.cwd()): Promise<PrivateCopy> {
  const original = typeof config === 'string' ? resolve(cwd, config) : undefined;
  const source = original === undefined ? cwd : dirname(original);
  const bytes = original === undefined ? Buffer.from(`${JSON.stringify(config, null, 2)}\n`) : await readFile(original);
  const folder = await mkdtemp(join(tmpdir(), 'mockapi-test-copy-'));
  const name = original === undefined ? CONFIG_NAME : basename(original);
  const file = join(folder, name);
  try {
    for (const entry of await readdir(source)) {
      if (entry === name || NOT_LINKED.has(entry)) continue;
      await symlink(join(source, entry), join(folder, entry)).catch(() => {}); // a link that cannot be made: that entry is not reachable
    }
    await writeFile(file, bytes);
  } catch (err) {
    await rm(folder, { recursive: true, force: true });
    throw err;
  }
  return {
    file,
    linkedFolder: source,
    async restore() {
      const now = await readFile(file).catch(() => undefined);
      if (now !== undefined && now.equals(bytes)) return false;
      await writeFile(file, bytes);
      return true;
    },
    remove: () => rm(folder, { recursive: true, force: true }),
  };
}
