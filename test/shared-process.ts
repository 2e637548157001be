// Run before each test file of the "shared" project (vitest.config.ts), whose files share worker
// processes: whatever a file left changed for the process is put back once its tests are done, so
// the next file in the same process starts as it would in a fresh one.
import { afterAll, vi } from 'vitest';
import { stopAll } from './helpers/cli.js';

afterAll(async () => {
  await stopAll(); // a `mockapi serve` the file started and did not stop
  vi.useRealTimers();
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
});
