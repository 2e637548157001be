import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { updateFile } from '../../src/state/swap-file.js';
import { removeDir, tempDir } from '../helpers/cli.js';

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await tempDir('mockapi-swap-');
  file = join(dir, 'mockapi.yaml');
});

afterEach(async () => {
  await removeDir(dir);
});

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
