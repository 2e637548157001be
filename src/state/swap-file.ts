import { closeSync, fstatSync, lstatSync, openSync, readSync, renameSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fsyncDir, resolveWriteTarget, writeTempBeside } from './atomic-write.js';

/**
 * Changing a file that someone else may save at any moment, without losing their save.
 *
 * rename(tmp, file) replaces whatever is at `file` at that instant: an editor's save landing
 * between a "has it changed?" check and the rename is destroyed without a trace. So we read the
 * file through a descriptor that we keep open (it holds that very file, whatever happens to the
 * name), build our bytes, and then, in adjacent synchronous calls:
 *
 *   1. re-read the held file through the descriptor: different bytes mean a save in place came in
 *      between (an editor truncating and rewriting);
 *   2. lstat(file): another inode means a save by rename came in between;
 *   3. rename(ours, file) only when neither happened. Otherwise nothing is published — bytes built
 *      from an older version never reach the file — and we start over from the newest bytes.
 *
 * In `settle()` the held file is read once more: an editor that
 * opened it before the rename writes into it, not into the file now at the name. Such bytes (once
 * they stop changing) are put back at the name the same way, and the caller applies its change to
 * them again.
 *
 * What is left: a save renamed over `file` between the lstat and the rename of step 3 — two
 * adjacent system calls, microseconds — is replaced. POSIX offers no atomic compare-and-swap of a
 * name (Linux's renameat2(RENAME_EXCHANGE) would close it; Node has no binding). Moving the file
 * aside and linking ours in (link() refuses to replace) would close that window too, but leave
 * the name absent for a moment: a kill -9 then leaves no config at all, and hot reload wants the
 * old file or the new one, whole, at any moment. We keep the file always present. No hard link is
 * made either: a link count change is one more event for the servers' watchers to digest.
 */

/** How often we start over because of a concurrent save (or re-read a vanished file) before giving up. */
const MAX_ATTEMPTS = 50;
/** Pause before re-reading a file that was missing or did not pass the transform: a save may be under way. */
const SETTLE_MS = 20;

/** Which file (device and inode). */
interface Identity {
  dev: number;
  ino: number;
}

/** A file as read: identity, mode and bytes, and the descriptor kept open on it (it holds that file whatever happens to the name). */
interface HeldSnapshot extends Identity {
  fd: number;
  mode: number;
  bytes: Buffer;
}

/** What a transform makes of the file's current bytes. */
export type TransformResult<F> = { ok: true; bytes: Buffer | undefined } | { ok: false; failure: F };

export interface FileUpdateHooks {
  /** Test seam: runs right before the swap, after the new bytes are written to the temporary file. */
  beforeSwap?: () => Promise<void> | void;
  /** Test seam: runs right after a successful swap, while the replaced file is still held open. */
  afterSwap?: () => Promise<void> | void;
}

/** A change that is in place. Call `settle()` before relying on it, then `release()`. */
export interface FileUpdate {
  /** The bytes at the file now (ours, or the file's own when the transform needed no change). */
  bytes: Buffer;
  /** Whether this update wrote the file (false: the current bytes needed no change). */
  written: boolean;
  /**
   * True when the file was edited since: a save over ours, or a write into the file we replaced
   * (which is then put back in place). Run the update again on true.
   */
  settle(): Promise<boolean>;
  /** Closes the replaced file, held open until now. */
  release(): Promise<void>;
}

export type FileUpdateResult<F> =
  | { ok: true; update: FileUpdate; concurrentEdits: number }
  | { ok: false; failure: F }
  | { ok: false; missing: true }
  | { ok: false; busy: true };

/**
 * Applies `transform` to the newest bytes of `path` (a symlink's target) and writes the result so
 * that no save made meanwhile by someone else is lost (see the comment at the top). A failing
 * transform leaves the file, with whatever edit it holds, in place. `busy` after 50 concurrent
 * saves in a row; `missing` when the file is gone.
 */
export async function updateFile<F>(
  path: string,
  transform: (bytes: Buffer) => TransformResult<F> | Promise<TransformResult<F>>,
  hooks: FileUpdateHooks = {},
): Promise<FileUpdateResult<F>> {
  const target = await resolveWriteTarget(path);
  let concurrentEdits = 0;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const snap = holdSnapshot(target);
    if (!snap) {
      await sleep(SETTLE_MS);
      if (statIdentity(target)) continue;
      return { ok: false, missing: true };
    }
    let keep = false;
    try {
      const result = await transform(snap.bytes);
      if (!result.ok) {
        // Perhaps a save caught half-way: fail only on bytes that stay.
        await sleep(SETTLE_MS);
        if (isUnchanged(target, snap)) return result;
        continue;
      }
      if (result.bytes === undefined) {
        keep = true;
        return { ok: true, update: heldUpdate(target, snap, snap, false), concurrentEdits };
      }
      const tmp = await writeTempBeside(target, result.bytes, snap.mode);
      await hooks.beforeSwap?.();
      const ours = { dev: tmp.dev, ino: tmp.ino, bytes: result.bytes };
      if (compareAndRename(target, tmp.path, snap, snap.fd)) {
        await fsyncDir(dirname(target));
        await hooks.afterSwap?.();
        keep = true;
        return { ok: true, update: heldUpdate(target, ours, snap, true), concurrentEdits };
      }
      await unlink(tmp.path).catch(() => {});
    } finally {
      if (!keep) closeSync(snap.fd);
    }
    concurrentEdits++;
    await sleep(Math.min(attempt, 10)); // let a burst of saves pass rather than race every one
  }
  return { ok: false, busy: true };
}

/** The update's view after the swap: `current` is at the name, `held` is the file we read (still open). */
function heldUpdate(
  target: string,
  current: Identity & { bytes: Buffer },
  held: HeldSnapshot,
  written: boolean,
): FileUpdate {
  let open = true;
  return {
    bytes: current.bytes,
    written,
    async settle() {
      if (written && open && !readThrough(held.fd).equals(held.bytes)) {
        // Written into after we replaced it: that edit belongs at the name. Wait for the writer to
        // finish, then put its bytes back unless a newer save already took the name.
        let bytes = readThrough(held.fd);
        for (let same = false; !same;) {
          await sleep(SETTLE_MS);
          const again = readThrough(held.fd);
          same = again.equals(bytes);
          bytes = again;
        }
        const tmp = await writeTempBeside(target, bytes, held.mode);
        if (!compareAndRename(target, tmp.path, current)) await unlink(tmp.path).catch(() => {});
        return true;
      }
      return !isUnchanged(target, current);
    },
    async release() {
      if (open) closeSync(held.fd);
      open = false;
    },
  };
}

/** Steps 1–3 of the top comment: renames `candidate` over `target` when it still holds `expected`. */
function compareAndRename(
  target: string,
  candidate: string,
  expected: Identity & { bytes: Buffer },
  heldFd?: number,
): boolean {
  if (heldFd !== undefined) {
    if (!readThrough(heldFd).equals(expected.bytes)) return false;
  } else if (!isUnchanged(target, expected)) return false;
  const named = statIdentity(target);
  if (!named || named.dev !== expected.dev || named.ino !== expected.ino) return false;
  renameSync(candidate, target);
  return true;
}

function isUnchanged(target: string, expected: Identity & { bytes: Buffer }): boolean {
  const now = holdSnapshot(target);
  if (!now) return false;
  closeSync(now.fd);
  return now.dev === expected.dev && now.ino === expected.ino && now.bytes.equals(expected.bytes);
}

function statIdentity(path: string): Identity | undefined {
  try {
    const { dev, ino } = lstatSync(path);
    return { dev, ino };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Opens `path` and reads it; the descriptor stays open (the caller closes it). Undefined when missing. */
function holdSnapshot(path: string): HeldSnapshot | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const { dev, ino, mode } = fstatSync(fd);
    return { fd, dev, ino, mode: mode & 0o7777, bytes: readThrough(fd) };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** The whole content of an open file, read from its start (the descriptor's position is not used). */
function readThrough(fd: number): Buffer {
  const size = fstatSync(fd).size;
  const buffer = Buffer.alloc(size);
  let read = 0;
  while (read < size) {
    const n = readSync(fd, buffer, read, size - read, read);
    if (n === 0) break;
    read += n;
  }
  return buffer.subarray(0, read);
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}
