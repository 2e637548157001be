import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { recoverSwapLeftovers, updateFile } from '../src/swap-file.js';
import { removeDir, tempDir } from './helpers/cli.js';

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await tempDir('mockapi-swap-');
  file = join(dir, 'mockapi.yaml');
});

afterEach(async () => {
  await removeDir(dir);
});

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  const pid = child.pid as number;
  await new Promise((done) => child.once('exit', done));
  return pid;
}

const upper = (bytes: Buffer) => ({ ok: true as const, bytes: Buffer.from(bytes.toString().toUpperCase()) });

describe('updateFile', () => {
  it('replaces the bytes and keeps nothing beside the file after release', async () => {
    await writeFile(file, 'abc\n');
    const result = await updateFile(file, upper);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(await result.update.settle()).toBe(false);
    await result.update.release();
    expect(await readFile(file, 'utf8')).toBe('ABC\n');
    expect(await readdir(dir)).toEqual(['mockapi.yaml']);
  });

  it('a failing transform leaves the file as it is', async () => {
    await writeFile(file, 'abc\n');
    const result = await updateFile(file, () => ({ ok: false, failure: 'no' }));
    expect(result).toEqual({ ok: false, failure: 'no' });
    expect(await readFile(file, 'utf8')).toBe('abc\n');
  });

  it('settle() reports a save made over the result', async () => {
    await writeFile(file, 'abc\n');
    const result = await updateFile(file, upper);
    if (!result.ok) throw new Error('not ok');
    await writeFile(file, 'saved later\n');
    expect(await result.update.settle()).toBe(true);
    await result.update.release();
    expect(await readFile(file, 'utf8')).toBe('saved later\n');
  });
});

describe('recoverSwapLeftovers (a kill between the calls of the swap)', () => {
  it('puts the file back from the aside name of a dead process when the file is missing', async () => {
    const aside = join(dir, `.mockapi.yaml.mockapi-prev-${await deadPid()}-0a0b0c0d`);
    await writeFile(aside, 'apiKey: mk_x\n');
    expect(await recoverSwapLeftovers(file)).toBe(aside);
    expect(await readFile(file, 'utf8')).toBe('apiKey: mk_x\n');
    expect(await readdir(dir)).toEqual(['mockapi.yaml']);
  });

  it('deletes stale aside files when the file exists; leaves those of live processes', async () => {
    await writeFile(file, 'current\n');
    const stale = join(dir, `.mockapi.yaml.mockapi-prev-${await deadPid()}-0a0b0c0d`);
    const live = join(dir, `.mockapi.yaml.mockapi-prev-${process.ppid}-0a0b0c0d`);
    await writeFile(stale, 'old\n');
    await writeFile(live, 'held\n');
    expect(await recoverSwapLeftovers(file)).toBeUndefined();
    expect(await readFile(file, 'utf8')).toBe('current\n');
    expect((await readdir(dir)).sort()).toEqual([live.slice(dir.length + 1), 'mockapi.yaml'].sort());
  });
});
