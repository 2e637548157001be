import { configDefaults, defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/sequencer.js';
import { ISOLATED_FILES } from './test/isolated-files.js';

// Every node process reads the certificates NODE_EXTRA_CA_CERTS names when it starts: a machine
// that points it at the system's whole bundle (~140 certificates) adds ~95 ms of CPU to each CLI
// the tests spawn (thousands in a run). The tests talk to 127.0.0.1 alone, and a test that needs a
// CA passes its own (https.test.ts, upstream-proxy.test.ts); npm reads its own `cafile` setting.
delete process.env.NODE_EXTRA_CA_CERTS;

// MOCKAPI_TEST_CPU=<file>: each test file's CPU (its worker's and its children's) and spawns, one line a file (test/cpu-report.ts).
const CPU_REPORT = process.env.MOCKAPI_TEST_CPU ? ['test/cpu-report.ts'] : [];

export default defineConfig({
  test: {
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
    projects: [
      // Files that replace a module with vi.mock need a module graph of their own (test/isolated-files.ts).
      {
        extends: true,
        test: {
          name: 'isolated',
          include: [...ISOLATED_FILES],
          isolate: true,
          setupFiles: [...CPU_REPORT, 'test/temp-dirs.ts'],
        },
      },
      // The others share their worker processes: a fresh process and its imports for each of ~240
      // files took about a tenth of the run's CPU. test/shared-process.ts puts back after each file
      // what one may leave behind (fake timers, spies, stubbed environment variables and globals).
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ISOLATED_FILES],
          isolate: false,
          setupFiles: [...CPU_REPORT, 'test/shared-process.ts', 'test/temp-dirs.ts'],
        },
      },
    ],
  },
});
