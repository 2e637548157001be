// `npm run build` builds only when an input changed since the last complete build
// (scripts/build.mjs, scripts/build-stamp.mjs): the stamp over a small tree of inputs.
import { describe, expect, test } from 'vitest';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { dropStamp, inputStamp, isUpToDate, OUTPUTS, STAMP_FILE, writeStamp } from '../../scripts/build-stamp.mjs';
import { useTempDir } from '../helpers/cli.js';

const temp = useTempDir('mockapi-build-stamp-', { each: true });

async function tree(root: string): Promise<void> {
  await mkdir(join(root, 'src', 'config'), { recursive: true });
  await mkdir(join(root, 'schema'), { recursive: true });
  await writeFile(join(root, 'src', 'index.ts'), 'export const a = 1;\n');
  await writeFile(join(root, 'src', 'config', 'load.ts'), 'export const b = 2;\n');
  await writeFile(join(root, 'schema', 'mockapi.schema.json'), '{}\n');
  await writeFile(join(root, 'package.json'), '{"name":"x","version":"1.0.0"}\n');
  await writeFile(join(root, 'package-lock.json'), '{"lockfileVersion":3}\n');
  for (const output of OUTPUTS) {
    await mkdir(join(root, output, '..'), { recursive: true });
    await writeFile(join(root, output), '// built\n');
  }
}

describe('the build stamp', () => {
  test('a complete build is current until an input changes, is added or is removed', async () => {
    const root = temp.path;
    await tree(root);
    expect(isUpToDate(root)).toBe(false); // never built
    writeStamp(root);
    expect(isUpToDate(root)).toBe(true);
    await writeFile(join(root, 'src', 'config', 'load.ts'), 'export const b = 3;\n');
    expect(isUpToDate(root)).toBe(false);
    writeStamp(root);
    await writeFile(join(root, 'src', 'config', 'new.ts'), '');
    expect(isUpToDate(root)).toBe(false);
    writeStamp(root);
    await rm(join(root, 'src', 'config', 'new.ts'));
    expect(isUpToDate(root)).toBe(false);
    writeStamp(root);
    await writeFile(join(root, 'package-lock.json'), '{"lockfileVersion":3,"packages":{}}\n');
    expect(isUpToDate(root)).toBe(false);
    writeStamp(root);
    // A file moved to another name with the same bytes is another input.
    await rm(join(root, 'src', 'index.ts'));
    await writeFile(join(root, 'src', 'main.ts'), 'export const a = 1;\n');
    expect(isUpToDate(root)).toBe(false);
  });

  test('a missing output, a dropped stamp (a build under way) or another Node is not current', async () => {
    const root = temp.path;
    await tree(root);
    writeStamp(root);
    expect(isUpToDate(root)).toBe(true);
    await rm(join(root, 'dist', 'cli', 'cli.bundle.cjs'));
    expect(isUpToDate(root)).toBe(false);
    await writeFile(join(root, 'dist', 'cli', 'cli.bundle.cjs'), '// built\n');
    expect(isUpToDate(root)).toBe(true);
    dropStamp(root);
    expect(isUpToDate(root)).toBe(false);
    writeStamp(root);
    expect(inputStamp(root, 'v99.0.0')).not.toBe(inputStamp(root));
    await writeFile(join(root, STAMP_FILE), `${inputStamp(root, 'v99.0.0')}\n`);
    expect(isUpToDate(root)).toBe(false);
  });
});
