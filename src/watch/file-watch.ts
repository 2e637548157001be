import { watch } from 'chokidar';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';

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

/** The longest a re-arm waits for chokidar's `ready` (it normally takes a `stat`, a millisecond). */
const READY_WAIT_MS = 2000;

/** One chokidar watcher of one file name. */
export interface FileWatch {
  /** Resolves once chokidar watches what the name points to now (or it was closed, or 2 s passed). */
  ready: Promise<void>;
  /** Stops it at once: no event is reported after this returns. */
  close(): void;
}

/**
 * Watches `file` (an absolute path) with its own chokidar watcher: writes in place, editors'
 * atomic saves, delete and re-create, `CHOKIDAR_USEPOLLING` where events do not arrive.
 *
 * Its own watcher, so that watching the name again (the caller's re-arm) is: close this one, start
 * another, await its `ready`. chokidar's `unwatch(f)` + `add(f)` re-attaches too, but tells no one
 * when the new watch exists (`ready` is emitted once per watcher), and the caller must not re-read
 * before it does. Close before starting the next: watchers of one process share one native watch
 * per path, so a new watcher started while the old one is open joins the old, possibly dead, inode.
 */
export function watchFileName(file: string, onEvent: () => void, onError: (err: Error) => void): FileWatch {
  const watcher = watch(file, { ignoreInitial: true, atomic: true });
  let settle: () => void = () => undefined;
  const ready = new Promise<void>((resolveReady) => (settle = resolveReady));
  watcher.once('ready', () => settle());
  // Bursts wait for this; should chokidar never say it is ready, they must not wait for ever (the
  // periodic check still covers the file).
  setTimeout(() => settle(), READY_WAIT_MS).unref();
  // A missing file is watched through its folder (chokidar waits for it there): only its name counts.
  watcher.on('all', (_event, path) => {
    if (resolve(path) === file) onEvent();
  });
  watcher.on('error', (err: unknown) => onError(err instanceof Error ? err : new Error(String(err))));
  return {
    ready,
    close(): void {
      // A watcher closed before its first scan ends never emits `ready`: release whoever awaits it.
      settle();
      watcher.close().catch(onError);
    },
  };
}
