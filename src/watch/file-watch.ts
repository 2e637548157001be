import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';

/** A missing file's signature (also a file under a missing or non-folder path). */
export const MISSING = 'missing';

/**
 * What the periodic check compares: device, inode, size, modification and change times. A save by
 * rename changes the inode (and the change time, even if an inode number is reused); a save in
 * place changes the times and usually the size. Not a content hash: this is the safety net under
 * the native events, and a reload re-reads and compares the bytes anyway.
 */
export async function signatureOf(file: string): Promise<string> {
  try {
    const s = await stat(file);
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? MISSING : `error:${code ?? 'unknown'}`;
  }
}

/**
 * A native watch of the inode that `file` names right now (inotify, kqueue, ReadDirectoryChangesW).
 * It reports writes in place, and the inode losing its name (renamed over, deleted, moved away),
 * but nothing after that: the caller must watch the name again after every event it acts on.
 * Undefined when the file cannot be watched now; a missing file is not an error.
 */
export function watchInode(file: string, onEvent: () => void, onError: (err: Error) => void): FSWatcher | undefined {
  try {
    // persistent: false — the watch alone must not keep a process alive that has nothing else to do.
    const watcher = watch(file, { persistent: false }, () => onEvent());
    watcher.on('error', (err: Error) => {
      watcher.close();
      onError(err);
    });
    return watcher;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') onError(err as Error);
    return undefined;
  }
}
