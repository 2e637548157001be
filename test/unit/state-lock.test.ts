import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, realpath, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireStateLock, lockFileOf, StateLockTimeout, withStateLock } from '../../src/state/state-lock.js';

let dir: string;
let file: string;
let lock: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mockapi-lock-'));
  file = join(dir, 'state.json');
  lock = join(dir, '.state.json.lock');
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

const lockText = (pid: number, host = hostname()) => `${JSON.stringify({ pid, host, token: `${pid}-other` })}\n`;

describe('the state file lock', () => {
  it('is the file `.<name>.lock` beside the state, created while held and removed after', async () => {
    const seen = await withStateLock(file, async () => readdir(dir));
    expect(seen).toEqual(['.state.json.lock']);
    expect(await readdir(dir)).toEqual([]);
  });

  it('lets one holder in at a time', async () => {
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 20 }, () =>
        withStateLock(file, async () => {
          inside++;
          most = Math.max(most, inside);
          await new Promise((r) => setTimeout(r, 1));
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
  });

  it('takes over at once a lock whose process is gone', async () => {
    await writeFile(lock, lockText(deadPid()));
    const release = await acquireStateLock(file, { timeoutMs: 200 });
    expect(await readFile(lock, 'utf8')).toContain(`"pid":${process.pid}`);
    await release();
    expect(await readdir(dir)).toEqual([]);
  });

  it('waits for a live holder, gives up after timeoutMs, and leaves its lock alone', async () => {
    await writeFile(lock, lockText(process.pid));
    await expect(acquireStateLock(file, { timeoutMs: 50 })).rejects.toBeInstanceOf(StateLockTimeout);
    expect(await readFile(lock, 'utf8')).toBe(lockText(process.pid));
  });

  it('takes over a lock older than staleMs even if its process seems alive (hung, or on another host)', async () => {
    await writeFile(lock, lockText(process.pid, 'elsewhere'));
    const old = new Date(Date.now() - 60_000);
    await utimes(lock, old, old);
    const release = await acquireStateLock(file, { timeoutMs: 200, staleMs: 10_000 });
    await release();
    expect(await readdir(dir)).toEqual([]);
  });

  it('an empty lock (its writer killed before filling it) is taken over by age only', async () => {
    await writeFile(lock, '');
    await expect(acquireStateLock(file, { timeoutMs: 50 })).rejects.toBeInstanceOf(StateLockTimeout);
    const old = new Date(Date.now() - 60_000);
    await utimes(lock, old, old);
    await (
      await acquireStateLock(file, { timeoutMs: 200 })
    )();
  });

  it('release never removes a lock that another process took over meanwhile', async () => {
    const release = await acquireStateLock(file);
    await writeFile(lock, lockText(process.pid)); // as after a takeover
    await release();
    expect(await readFile(lock, 'utf8')).toBe(lockText(process.pid));
  });

  it('a symlinked state file shares the lock of its target', async () => {
    const target = join(dir, 'real.json');
    await writeFile(target, '{}');
    await symlink(target, file);
    expect(await lockFileOf(file)).toBe(join(await realpath(dir), '.real.json.lock'));
  });
});
