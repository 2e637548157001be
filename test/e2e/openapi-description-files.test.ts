// How `mockapi import` reads a description's files: a regular file in one buffer of the size `stat`
// gives (a description split over thousands of files allocated two 1 MiB buffers per file before),
// a file larger than the bound refused, the bytes exactly the file's.
import { describe, expect, test, vi } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempDir } from '../helpers/cli.js';
import { descriptionFiles } from '../../src/description/description-files.js';

const temp = useTempDir('mockapi-description-files-', { each: true });

describe('reading description files', () => {
  test('a small file is read into a buffer of its own size, not a 1 MiB chunk', async () => {
    const file = join(temp.path, 'part.yaml');
    const text = 'Pet:\n  type: object\n  properties: { id: { type: integer } }\n';
    await writeFile(file, text);
    const files = descriptionFiles(join(temp.path, 'openapi.yaml'), [{ given: temp.path, real: temp.path }], (p) => p);
    const allocations: number[] = [];
    const allocUnsafe = Buffer.allocUnsafe.bind(Buffer);
    const spy = vi.spyOn(Buffer, 'allocUnsafe').mockImplementation((size: number) => {
      allocations.push(size);
      return allocUnsafe(size);
    });
    try {
      const data = await files.resolve.file.read({
        url: file,
        reference: './part.yaml',
        baseUrl: join(temp.path, 'openapi.yaml'),
      });
      expect(data).toEqual({ Pet: { type: 'object', properties: { id: { type: 'integer' } } } });
    } finally {
      spy.mockRestore();
    }
    expect(Math.max(...allocations)).toBeLessThanOrEqual(Buffer.byteLength(text) + 1);
  });
});
