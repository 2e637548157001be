// Run after each test file of both projects (vitest.config.ts): the temporary folders the file
// made with tempDir (test/helpers/cli.ts) are removed, once the `mockapi serve` children it started
// have stopped — a run of the suite leaves nothing of its own in the system's temporary folder.
import { afterAll } from 'vitest';
import { removeTempDirs } from './helpers/cli.js';

afterAll(removeTempDirs);
