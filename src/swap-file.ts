import { linkSync, renameSync, unlinkSync } from 'node:fs';
import { open, readdir, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fsyncDir, isProcessAlive, resolveWriteTarget, sidePathFor, writeTempBeside } from './atomic-write.js';

/**
 * Changing a file that someone else may save at any moment, without ever losing their save.
 *
 * POSIX has no compare-and-swap for a name: rename(tmp, file) replaces whatever is at `file` at
 * that instant, and an editor's save renamed there a microsecond before our rename would be gone
 * without a trace (checking first only narrows that window). So we never rename over the file.
 * We move the file aside and put ours in its place, with two calls that each either succeed or
 * tell us what they met:
 *
 *   1. rename(file, aside)  captures exactly what was at `file` at that instant, whoever saved it;
 *   2. link(ours, file)     fails with EEXIST when someone created `file` after step 1; their save
 *                           then simply stays (it would have replaced the captured one anyway).
 *
 * After step 2 we compare what we captured (inode and bytes) with what we read. The same: nothing
 * came in between. Different: that is an edit saved after our read; we put it back the same way
 * (expecting to capture our own file, else the newer save found there is put back instead) and
 * start over from the newest bytes. So an edit is, at every step, either at `file` or held by us
 * and put back: the window is closed, not narrowed.
 *
 * The cost: between the two calls (adjacent synchronous calls, microseconds) `file` does not
 * exist. A reader then gets ENOENT and a watcher sees a delete and re-create, as with editors that
 * save that way. A kill -9 in those microseconds leaves the file under its aside name;
 * `recoverSwapLeftovers` puts it back. The captured file is kept aside until `settle()`, because
 * an editor that opened it before step 1 may still be writing into it: its bytes are checked then.
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
    const swap = await install(target, tmp.path, snap);
    if (swap.kind === 'ok') {
      await fsyncDir(dirname(target));
      await hooks.afterSwap?.();
      const ours = { dev: tmp.dev, ino: tmp.ino, bytes: result.bytes };
      return { ok: true, update: settledUpdate(target, ours, swap.aside, snap), concurrentEdits };
    }
    await unlink(tmp.path).catch(() => {});
    concurrentEdits++;
    if (swap.kind === 'foreign') await putBack(target, swap.aside, tmp);
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
          await putBack(target, asideNow, current);
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
  /** Someone created the file between our two calls; ours was not installed, theirs stays. */
  | { kind: 'superseded' }
  /** There was no file to replace; nothing changed. */
  | { kind: 'missing' }
  /** Ours is in place, but what we captured was not `expected`: a save we must put back. */
  | { kind: 'foreign'; aside: string };

/** Puts `candidate` at `target`, capturing what was there (the two calls of the top comment). */
async function install(target: string, candidate: string, expected: Identity): Promise<InstallResult> {
  const aside = sidePathFor(target, ASIDE_MARKER);
  try {
    renameSync(target, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    throw err;
  }
  try {
    linkSync(candidate, target);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      unlinkSync(aside);
      unlinkSync(candidate);
      return { kind: 'superseded' };
    }
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') {
      renameSync(aside, target); // put the file back as it was before failing
      throw err;
    }
    // A file system without hard links: rename instead, which cannot tell if someone got in between.
    renameSync(candidate, target);
  }
  await unlink(candidate).catch(() => {});
  return sameFile(await readSnapshot(aside), expected) ? { kind: 'ok', aside } : { kind: 'foreign', aside };
}

/**
 * Puts a captured save back at `target`, expecting to replace `ours`. When a newer save is found
 * there instead, that one is put back in turn (the captured one was older than it).
 */
async function putBack(target: string, captured: string, ours: Identity): Promise<void> {
  let candidate = captured;
  let expected: Identity = ours;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const candidateId = await stat(candidate);
    const result = await install(target, candidate, expected);
    if (result.kind === 'superseded') return;
    if (result.kind === 'missing') {
      // Deleted meanwhile: put the save back unless a newer one already took the name.
      try {
        linkSync(candidate, target);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      await unlink(candidate).catch(() => {});
      return;
    }
    if (result.kind === 'ok') {
      await unlink(result.aside).catch(() => {});
      return;
    }
    candidate = result.aside;
    expected = { dev: candidateId.dev, ino: candidateId.ino };
  }
}

function sameFile(actual: Snapshot | undefined, expected: Identity): boolean {
  if (!actual || actual.dev !== expected.dev || actual.ino !== expected.ino) return false;
  return expected.bytes === undefined || actual.bytes.equals(expected.bytes);
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
