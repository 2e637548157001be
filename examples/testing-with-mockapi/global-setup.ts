// vitest globalSetup: one mock server for the whole run, on a copy of mockapi.yaml (the tests
// rotate its key, which rewrites the file) and with a virtual clock (the tests move it).
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { startMockServer } from 'mockapi-cli';

export default async function setup(project: TestProject) {
  const dir = await mkdtemp(join(tmpdir(), 'shop-mock-'));
  const config = join(dir, 'mockapi.yaml');
  await copyFile(fileURLToPath(new URL('./mockapi.yaml', import.meta.url)), config);
  const server = await startMockServer({ config, port: 0, clock: '2026-11-30T12:00:00Z' });
  project.provide('mockBaseUrl', server.url);
  return async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    mockBaseUrl: string;
  }
}
