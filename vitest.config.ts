import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One id per run: test files share one packed checkout through it (test/helpers/packed.ts).
    globalSetup: ['test/global-setup.ts'],
    // Black-box tests spawn the real CLI; give them room on a 2-core machine running files side by side.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // vitest's default is one worker per core less one: one file at a time on two cores, while a
    // black-box file spends most of its time waiting on the CLI it spawned.
    maxWorkers: 3,
    // The slowest files first (test/sequencer.ts).
    sequence: { sequencer: SlowFirstSequencer },
  },
});
