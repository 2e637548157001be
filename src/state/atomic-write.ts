import { open, rename, unlink, stat, readdir, lstat, readlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

/** Temporary files are named `.<target>.mockapi-tmp-<pid>-<random>` so leftovers can be found. */
const TMP_MARKER = '.mockapi-tmp-';

/** Linux gives up after 40 links in a chain (ELOOP); so do we. */
const MAX_LINK_HOPS = 40;

/** A name beside `target` for a file of this process: `.<target><marker><pid>-<random>`. */
export function sidePathFor(target: string, marker: string = TMP_MARKER): string {
  return join(dirname(target), `.${basename(target)}${marker}${process.pid}-${randomBytes(4).toString('hex')}`);
}

/**
 * The file a write to `path` must replace: `path` itself, or, when it is a symlink, the end of its
 * chain of links (a symlinked state file or config stays a symlink, writes go to its
 * target). Renaming over the link would replace the link with a regular file and leave the
 * target, which everyone else reads, as it was. A link to a missing file resolves to that missing
 * path, so the first write creates it. Only the last component is followed: folders on the way
 * may be links, rename() goes through them as it does through any path.
 */
export async function resolveWriteTarget(path: string): Promise<string> {
  let current = resolve(path);
  for (let hops = 0; hops <= MAX_LINK_HOPS; hops++) {
    let isLink: boolean;
    try {
      isLink = (await lstat(current)).isSymbolicLink();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return current;
      throw err;
    }
    if (!isLink) return current;
    current = resolve(dirname(current), await readlink(current));
  }
  throw Object.assign(new Error(`too many levels of symbolic links: ${path}`), { code: 'ELOOP' });
}

/**
 * Replaces `path` with `data` so that a crash at any moment leaves either the old file or the
 * new one, whole: write a temporary file in the same folder, fsync it, rename it over the target,
 * fsync the folder. The target's mode is kept (a new file gets `mode`, default 0o644). A symlink
 * stays a symlink: the file it (finally) points to is replaced, in that file's folder.
 * With `durable: false` both fsyncs are skipped: readers still never see half a file (the rename
 * is atomic), but after a power loss the file may be old, empty or missing.
 *
 * We do this by hand rather than with write-file-atomic because we also need the folder fsync and
 * predictable temporary names, so that `cleanupTempFiles` can remove what a killed run left behind.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  { mode = 0o644, durable = true }: { mode?: number; durable?: boolean } = {},
): Promise<void> {
  const target = await resolveWriteTarget(path);
  const existingMode = await stat(target).then(
    (s) => s.mode & 0o7777,
    () => mode,
  );
  const tmp = await writeTempBeside(target, data, existingMode, durable);
  try {
    await rename(tmp.path, target);
  } catch (err) {
    await unlink(tmp.path).catch(() => {});
    throw err;
  }
  if (durable) await fsyncDir(dirname(target));
}

/** A temporary file written beside its target, and its identity (device and inode). */
export interface TempFile {
  path: string;
  dev: number;
  ino: number;
}

/**
 * Writes `data` to a new temporary file beside `target` (same folder, so a rename or link to the
 * target stays on one file system) with `mode`, fsynced unless `durable` is false. Nothing is
 * left behind when it fails.
 */
export async function writeTempBeside(
  target: string,
  data: string | Uint8Array,
  mode: number,
  durable = true,
): Promise<TempFile> {
  const path = sidePathFor(target);
  const handle = await open(path, 'wx', mode);
  try {
    await handle.writeFile(data);
    await handle.chmod(mode); // open() applies the umask; chmod does not
    if (durable) await handle.sync();
    const { dev, ino } = await handle.stat();
    await handle.close();
    return { path, dev, ino };
  } catch (err) {
    await handle.close().catch(() => {});
    await unlink(path).catch(() => {});
    throw err;
  }
}

/** fsync of a folder, so that a rename in it survives a power loss. */
export async function fsyncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Some file systems refuse fsync on a folder; the rename is still atomic there.
  } finally {
    await handle?.close().catch(() => {});
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes temporary files that a killed `writeFileAtomic` left beside `path` (beside its target
 * when it is a symlink, where they were written). Files of a process that is still alive are left
 * alone: it may be writing them right now.
 */
export async function cleanupTempFiles(path: string): Promise<string[]> {
  const target = await resolveWriteTarget(path).catch(() => resolve(path));
  const dir = dirname(target);
  const prefix = `.${basename(target)}${TMP_MARKER}`;
  const removed: string[] = [];
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid !== process.pid && isAlive(pid)) continue;
    if (pid === process.pid) continue;
    await unlink(join(dir, name)).then(
      () => removed.push(join(dir, name)),
      () => {},
    );
  }
  return removed;
}

export { isAlive as isProcessAlive };
