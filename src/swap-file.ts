import { closeSync, fstatSync, linkSync, openSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { open, readdir, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fsyncDir, isProcessAlive, resolveWriteTarget, sidePathFor, writeTempBeside } from './atomic-write.js';

/**
 * Changing a file that someone else may save at any moment, without ever losing their save.
 *
 * POSIX has no compare-and-swap for a name: rename(tmp, file) replaces whatever is at `file` at
 * that instant, and an editor's save renamed there a microsecond before our rename would be gone
 * without a trace (checking first only narrows that window). So we never rename over the file.
 * Three adjacent synchronous calls make the compare-and-swap instead:
 *
 *   1. rename(file, aside)     takes exactly what was at `file` at that instant, whoever saved it;
 *   2. compare it (inode and bytes, read through one descriptor) with what we expect — what we
 *      read and built our bytes from;
 *   3. link(ours, file) when it matches, else link(aside, file) to put the other save straight
 *      back. link() never replaces: it fails with EEXIST when someone created `file` after step 1,
 *      and that newest save then simply stays.
 *
 * So every version of the file is, at every moment, either at `file` or held by us and put back;
 * bytes built from an older version are never published. The window is closed, not narrowed.
 * An editor that truncates and rewrites in place is covered too: its truncation shows in step 2.
 *
 * The cost: during the three calls (microseconds; the config is small) `file` does not exist. A
 * reader then gets ENOENT and a watcher sees a delete and re-create, as with editors that save that
 * way. A kill -9 in those microseconds leaves the file under its aside name, and
 * `recoverSwapLeftovers` puts it back. The replaced file is kept aside until `settle()`: a writer
 * that opened it before step 1 and did not truncate could still write into it; those bytes are
 * checked then and put back in place if they changed.
 */

/** Aside files are named `.<file>.mockapi-prev-<pid>-<random>`. */
const ASIDE_MARKER = '.mockapi-prev-';
/** How often we start over because of a concurrent save (or re-read a vanished file) before giving up. */
const MAX_ATTEMPTS = 50;
/** Pause before re-reading a file that was missing or did not pass the transform: a save may be under way. */
const SETTLE_MS = 20;

interface Identity {
  dev: number;
  ino: number;
  /** When set, the file must also still hold exactly these bytes. */
  bytes?: Buffer;
}

interface Snapshot extends Identity {
  bytes: Buffer;
  mode: number;
}

/** What a transform makes of the file's current bytes. */
export type TransformResult<F> = { ok: true; bytes: Buffer | undefined } | { ok: false; failure: F };

export interface FileUpdateHooks {
  /** Test seam: runs right before the swap, after the new bytes are written to the temporary file. */
  beforeSwap?: () => Promise<void> | void;
  /** Test seam: runs right after a successful swap, while the replaced file is held aside. */
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
  /** Deletes the replaced file kept aside. */
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
    const snap = await readSnapshot(target);
    if (!snap) {
      await sleep(SETTLE_MS);
      if (await readSnapshot(target)) continue;
      return { ok: false, missing: true };
    }
    const result = await transform(snap.bytes);
    if (!result.ok) {
      // Perhaps a save caught half-way: fail only on bytes that stay.
      await sleep(SETTLE_MS);
      if (sameFile(await readSnapshot(target), snap)) return result;
      continue;
    }
    if (result.bytes === undefined) return { ok: true, update: settledUpdate(target, snap, undefined, snap), concurrentEdits };
    const tmp = await writeTempBeside(target, result.bytes, snap.mode);
    await hooks.beforeSwap?.();
    const swap = install(target, tmp.path, snap);
    if (swap.kind === 'ok') {
      await fsyncDir(dirname(target));
      await hooks.afterSwap?.();
      const ours = { dev: tmp.dev, ino: tmp.ino, bytes: result.bytes };
      return { ok: true, update: settledUpdate(target, ours, swap.aside, snap), concurrentEdits };
    }
    await unlink(tmp.path).catch(() => {});
    concurrentEdits++;
    await sleep(Math.min(attempt, 10)); // let a burst of saves pass rather than race every one
  }
  return { ok: false, busy: true };
}

function settledUpdate(target: string, current: Identity & { bytes: Buffer }, aside: string | undefined, replaced: Snapshot): FileUpdate {
  return {
    bytes: current.bytes,
    written: aside !== undefined,
    async settle() {
      if (aside !== undefined) {
        const held = await readSnapshot(aside);
        if (held && !held.bytes.equals(replaced.bytes)) {
          // Written into after we replaced it: that edit belongs at the file.
          const asideNow = aside;
          aside = undefined;
          putBack(target, asideNow, current);
          return true;
        }
      }
      return !sameFile(await readSnapshot(target), current);
    },
    async release() {
      if (aside !== undefined) await unlink(aside).catch(() => {});
      aside = undefined;
    },
  };
}

type InstallResult =
  | { kind: 'ok'; aside: string }
  /** `target` did not hold `expected` (or a save took the name in between): whatever is there stays. */
  | { kind: 'changed' }
  /** There was no file to replace; nothing changed. */
  | { kind: 'missing' };

/**
 * Compare-and-swap of `target` (the calls of the top comment): puts `candidate` there when it holds
 * `expected`, keeping the replaced file at the returned aside path. The candidate's own name is
 * removed unless the result is `missing`.
 */
function install(target: string, candidate: string, expected: Identity): InstallResult {
  const aside = sidePathFor(target, ASIDE_MARKER);
  try {
    renameSync(target, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    throw err;
  }
  let matches = false;
  let linked = false;
  try {
    matches = sameFile(snapshotSync(aside), expected);
  } finally {
    // Also after an error (then `matches` is false): what we took goes straight back.
    linked = linkInto(matches ? candidate : aside, target);
    removeName(candidate);
    if (!matches || !linked) removeName(aside);
  }
  return matches && linked ? { kind: 'ok', aside } : { kind: 'changed' };
}

/** link(from, to); false when `to` exists (a newer save took the name). */
function linkInto(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw err;
    // A file system without hard links: rename instead, which cannot tell if someone got in between.
    renameSync(from, to);
    return true;
  }
}

/**
 * Puts a file we hold aside back at `target`, expecting to replace `ours`; when a newer save is
 * there instead, that one stays and the held file is dropped (the newer save came after it).
 */
function putBack(target: string, held: string, ours: Identity): void {
  const result = install(target, held, ours);
  if (result.kind === 'ok') removeName(result.aside);
  else if (result.kind === 'missing') {
    // Deleted meanwhile: the held save goes back unless a newer one already took the name.
    linkInto(held, target);
    removeName(held);
  }
}

function removeName(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

function sameFile(actual: Snapshot | undefined, expected: Identity): boolean {
  if (!actual || actual.dev !== expected.dev || actual.ino !== expected.ino) return false;
  return expected.bytes === undefined || actual.bytes.equals(expected.bytes);
}

function snapshotSync(path: string): Snapshot {
  const fd = openSync(path, 'r');
  try {
    const { dev, ino, mode } = fstatSync(fd);
    return { dev, ino, mode: mode & 0o7777, bytes: readFileSync(fd) };
  } finally {
    closeSync(fd);
  }
}

/** Bytes and identity read through one descriptor, so they belong to the same file. */
async function readSnapshot(path: string): Promise<Snapshot | undefined> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const { dev, ino, mode } = await handle.stat();
    return { dev, ino, mode: mode & 0o7777, bytes: await handle.readFile() };
  } finally {
    await handle.close();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

/**
 * Cleans up after an `updateFile` that was killed: when the file is missing (killed between its two
 * calls) the most recently captured aside file of a dead process is put back; other aside files of
 * dead processes are deleted. Those of live processes are left alone. Returns what it put back.
 */
export async function recoverSwapLeftovers(path: string): Promise<string | undefined> {
  const target = await resolveWriteTarget(path);
  const dir = dirname(target);
  const prefix = `.${basename(target)}${ASIDE_MARKER}`;
  const names = await readdir(dir).catch(() => [] as string[]);
  const leftovers: Array<{ path: string; ctimeMs: number }> = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (pid === process.pid || (Number.isInteger(pid) && isProcessAlive(pid))) continue;
    const info = await stat(join(dir, name)).catch(() => undefined);
    if (info) leftovers.push({ path: join(dir, name), ctimeMs: info.ctimeMs });
  }
  leftovers.sort((a, b) => b.ctimeMs - a.ctimeMs);
  let restored: string | undefined;
  const newest = leftovers[0];
  if (newest && !(await stat(target).then(() => true, () => false))) {
    try {
      linkSync(newest.path, target);
      restored = newest.path;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  for (const leftover of leftovers) await unlink(leftover.path).catch(() => {});
  return restored;
}
