// vitest globalSetup: start mockapi once for the whole run, hand its URL to the tests.
// In vitest.config.ts: test: { globalSetup: ['./global-setup.ts'] }
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { startMockServer } from 'mockapi-cli';

export default async function setup(project: TestProject) {
  const server = await startMockServer({
    config: fileURLToPath(new URL('./mockapi.yaml', import.meta.url)),
    port: 0, // any free port: parallel CI jobs never collide
    seed: 1, // reproducible simulated failures
  });
  project.provide('mockUrl', `${server.url}/mock`);
  return () => server.close();
}

declare module 'vitest' {
  export interface ProvidedContext {
    mockUrl: string;
  }
}
