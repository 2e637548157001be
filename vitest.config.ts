import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One id per run: test files share one packed checkout through it (test/helpers/packed.ts).
    globalSetup: ['test/global-setup.ts'],
    // Black-box tests spawn the real CLI; give them room on a 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
