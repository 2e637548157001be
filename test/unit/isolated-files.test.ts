// A file that calls vi.mock must run in a process of its own (vitest.config.ts, test/isolated-files.ts):
// in a shared process the module it replaces may already be loaded, and the mock then misses it.
import { expect, test } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT } from '../helpers/cli.js';
import { ISOLATED_FILES } from '../isolated-files.js';

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? testFiles(join(dir, entry.name))
      : entry.name.endsWith('.test.ts')
        ? [relative(ROOT, join(dir, entry.name))]
        : [],
  );
}

test('every test file that calls vi.mock runs isolated, and every isolated file calls it', () => {
  const mocking = testFiles(join(ROOT, 'test'))
    .filter((file) => /\bvi\.(mock|doMock)\(/.test(readFileSync(join(ROOT, file), 'utf8')))
    .sort();
  expect(mocking).toEqual([...ISOLATED_FILES].sort());
});
