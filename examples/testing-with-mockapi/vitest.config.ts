import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['./global-setup.ts'],
    // The tests share one mock server: run them one after the other.
    fileParallelism: false,
  },
});
