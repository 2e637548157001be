import { open, readFile, realpath, rename, stat, unlink, link } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { isProcessAlive } from './atomic-write.js';

/*
 * A lock beside the usage state file, so that the read-add-write cycles of several servers sharing
 * it (and `mockapi usage --reset`) never interleave. Portable and without native code:
 * the lock is a file created with O_EXCL, `.<state file>.lock`, holding who took it. A lock whose
 * process is gone (same host), or that is older than `staleMs` (a process that hangs, or one on
 * another host), is taken over. Held for one read and one write: milliseconds.
 */

export interface StateLockOptions {
  /** Give up after waiting this long (the caller retries later). Default 3000 ms. */
  timeoutMs?: number;
  /** A lock older than this is taken over even if its process seems alive. Default 10000 ms. */
  staleMs?: number;
}

/** Thrown when the lock could not be taken within `timeoutMs`. */
export class StateLockTimeout extends Error {
  constructor(lockFile: string, holder: string) {
    super(`${lockFile} is held by ${holder}`);
    this.name = 'StateLockTimeout';
  }
}

interface LockInfo {
  pid: number;
  host: string;
  token: string;
}

const HOST = hostname();

/** The lock file of `stateFile`: beside the file a symlink points to, so every path to it shares one lock. */
export async function lockFileOf(stateFile: string): Promise<string> {
  const target = await realpath(stateFile).catch(() => stateFile);
  return join(dirname(target), `.${basename(target)}.lock`);
}

/** Takes the lock of `stateFile` (its folder must exist); resolves to the function that releases it. */
export async function acquireStateLock(
  stateFile: string,
  options: StateLockOptions = {},
): Promise<() => Promise<void>> {
  const lockFile = await lockFileOf(stateFile);
  const held = await acquire(lockFile, options.timeoutMs ?? 3000, options.staleMs ?? 10_000);
  return () => release(lockFile, held);
}

/** Runs `work` while holding the lock of `stateFile`; the folder must exist. */
export async function withStateLock<T>(
  stateFile: string,
  work: () => Promise<T>,
  options: StateLockOptions = {},
): Promise<T> {
  const release = await acquireStateLock(stateFile, options);
  try {
    return await work();
  } finally {
    await release();
  }
}

async function acquire(lockFile: string, timeoutMs: number, staleMs: number): Promise<string> {
  // Resolves to the text the lock file holds while it is ours.
  const token = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const content = `${JSON.stringify({ pid: process.pid, host: HOST, token } satisfies LockInfo)}\n`;
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(lockFile, 'wx');
      try {
        await handle.writeFile(content);
        return content;
      } catch {
        // A full disk: the lock is ours all the same (O_EXCL made it); only who holds it goes unsaid,
        // so it is taken over by age alone if this process dies holding it.
        return '';
      } finally {
        await handle.close();
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = await readLock(lockFile);
    if (holder !== undefined && (await isStale(lockFile, holder, staleMs))) {
      await takeOver(lockFile, holder);
      continue;
    }
    if (Date.now() - started > timeoutMs)
      throw new StateLockTimeout(
        lockFile,
        holder?.info ? `process ${holder.info.pid} on ${holder.info.host}` : 'another process',
      );
    // Short, growing, jittered waits: a holder keeps the lock for a read and a write.
    await new Promise((r) => setTimeout(r, Math.min(25, 1 + attempt) * (0.5 + Math.random())));
  }
}

interface Holder {
  text: string;
  info: LockInfo | undefined;
}

/** What the lock file holds, or undefined when it is gone (released meanwhile). */
async function readLock(lockFile: string): Promise<Holder | undefined> {
  let text: string;
  try {
    text = await readFile(lockFile, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const data = JSON.parse(text) as Partial<LockInfo>;
    if (typeof data.pid === 'number' && typeof data.host === 'string' && typeof data.token === 'string') {
      return { text, info: { pid: data.pid, host: data.host, token: data.token } };
    }
  } catch {
    // Empty or half written: its writer was killed between creating and filling it, or is filling it now.
  }
  return { text, info: undefined };
}

async function isStale(lockFile: string, holder: Holder, staleMs: number): Promise<boolean> {
  if (holder.info && holder.info.host === HOST && !isProcessAlive(holder.info.pid)) return true;
  const mtime = await stat(lockFile).then(
    (s) => s.mtimeMs,
    () => undefined,
  );
  return mtime !== undefined && Date.now() - mtime > staleMs;
}

/**
 * Removes a stale lock without removing a fresh one that replaced it meanwhile: moves it away under
 * a unique name, then checks it is the one judged stale; if not, puts it back (link fails if yet
 * another lock was taken since, which then stands).
 */
async function takeOver(lockFile: string, stale: Holder): Promise<void> {
  const moved = `${lockFile}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await rename(lockFile, moved);
  } catch {
    return; // already gone: released, or taken over by someone else
  }
  const text = await readFile(moved, 'utf8').catch(() => stale.text);
  if (text !== stale.text) await link(moved, lockFile).catch(() => {});
  await unlink(moved).catch(() => {});
}

async function release(lockFile: string, held: string): Promise<void> {
  const holder = await readLock(lockFile);
  // Only our own: after a takeover (we hung past staleMs) the lock is someone else's.
  if (holder?.text === held) await unlink(lockFile).catch(() => {});
}
