import { open, rename, unlink, stat, readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** Temporary files are named `.<target>.mockapi-tmp-<pid>-<random>` so leftovers can be found. */
const TMP_MARKER = '.mockapi-tmp-';

function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}${TMP_MARKER}${process.pid}-${randomBytes(4).toString('hex')}`);
}

/**
 * Replaces `target` with `data` so that a crash at any moment leaves either the old file or the
 * new one, whole: write a temporary file in the same folder, fsync it, rename it over the target,
 * fsync the folder. The target's mode is kept (a new file gets `mode`, default 0o644).
 * With `durable: false` both fsyncs are skipped: readers still never see half a file (the rename
 * is atomic), but after a power loss the file may be old, empty or missing.
 *
 * We do this by hand rather than with write-file-atomic because we also need the folder fsync and
 * predictable temporary names, so that `cleanupTempFiles` can remove what a killed run left behind.
 */
export async function writeFileAtomic(
  target: string,
  data: string | Uint8Array,
  { mode = 0o644, durable = true }: { mode?: number; durable?: boolean } = {},
): Promise<void> {
  const existingMode = await stat(target).then(
    (s) => s.mode & 0o7777,
    () => mode,
  );
  const tmp = tempPathFor(target);
  const handle = await open(tmp, 'wx', existingMode);
  try {
    await handle.writeFile(data);
    await handle.chmod(existingMode); // open() applies the umask; chmod does not
    if (durable) await handle.sync();
  } catch (err) {
    await handle.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw err;
  }
  await handle.close();
  try {
    await rename(tmp, target);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
  if (durable) await fsyncDir(dirname(target));
}

async function fsyncDir(dir: string): Promise<void> {
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
 * Removes temporary files that a killed `writeFileAtomic` left beside `target`. Files of a process
 * that is still alive are left alone: it may be writing them right now.
 */
export async function cleanupTempFiles(target: string): Promise<string[]> {
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
