// Once per test run: an id the test files share (test/helpers/packed.ts names the run's folder
// after it, so one packed checkout serves every file), and that folder removed at the end.
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import type {} from './helpers/packed.js'; // the declaration of `runId`

export default function setup(project: TestProject): () => Promise<void> {
  const runId = `${process.pid}-${randomBytes(4).toString('hex')}`;
  project.provide('runId', runId);
  return () => rm(join(tmpdir(), `mockapi-run-${runId}`), { recursive: true, force: true });
}
