// readStable (src/config/read-stable.ts): a config read while a save is writing it is read again,
// not taken half-written; a file that keeps moving is taken after the tries run out.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import type { FileHandle } from 'node:fs/promises';
import { readStable } from '../../src/config/read-stable.js';

const dir = await mkdtemp(join(tmpdir(), 'mockapi-read-stable-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A handle whose file grows by `growBy` between its two stats, `moving` times in all (a save in progress). */
function savingHandles(final: Buffer, moving: number) {
  let opened = 0;
  const openFile = async (): Promise<FileHandle> => {
    const n = ++opened;
    const partial = n <= moving ? final.subarray(0, Math.floor(final.length / 2)) : final;
    let stats = 0;
    return {
      stat: async () => {
        stats++;
        const size = BigInt(n <= moving && stats === 2 ? final.length : partial.length);
        return { size, mtimeNs: BigInt(n) * 1000n + BigInt(stats) * (n <= moving ? 1n : 0n) };
      },
      readFile: async () => partial,
      close: async () => {},
    } as unknown as FileHandle;
  };
  return { openFile, opened: () => opened };
}

describe('readStable', () => {
  test('reads a file as it is', async () => {
    const file = join(dir, 'a.yaml');
    await writeFile(file, 'apiKey: mk_a\n');
    expect((await readStable(file)).toString()).toBe('apiKey: mk_a\n');
    expect(await readFile(file, 'utf8')).toBe('apiKey: mk_a\n');
  });

  test('a file growing while it is read is read again, until it is still', async () => {
    const final = Buffer.from(`apiKey: mk_other\n# ${'x'.repeat(1000)}\n`);
    const saving = savingHandles(final, 2);
    const bytes = await readStable('unused', { openFile: saving.openFile, waitMs: 1 });
    expect(bytes.equals(final)).toBe(true);
    expect(saving.opened()).toBe(3);
  });

  test('a file that keeps moving is taken after the tries run out (the watcher reloads again)', async () => {
    const final = Buffer.from('apiKey: mk_b\n# padding padding\n');
    const saving = savingHandles(final, 100);
    const bytes = await readStable('unused', { openFile: saving.openFile, waitMs: 1, tries: 4 });
    expect(saving.opened()).toBe(4);
    expect(bytes.length).toBe(Math.floor(final.length / 2));
  });
});
