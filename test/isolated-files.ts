// The test files that run in a process of their own (vitest.config.ts, project "isolated"): each
// replaces a module with vi.mock, which takes effect only where the module is first imported, so
// it needs a module graph no other file has loaded. test/unit/isolated-files.test.ts checks that
// every file calling vi.mock is listed here.
export const ISOLATED_FILES: readonly string[] = [
  'test/e2e/answer-guard.test.ts',
  'test/unit/answer/when-compile-once.test.ts',
];
