import type { TestProject } from 'vitest/node';
import { startMockServer } from 'mockapi-cli';

// One mock server for the whole run, with a virtual clock each session can move on its own.
export default async function setup(project: TestProject) {
  const server = await startMockServer({ config: './mockapi.yaml', port: 0, clock: '2026-01-31T12:00:00Z' });
  project.provide('mockapiUrl', server.url); // what useMockServer({ session: true }) connects to
  return () => server.close();
}
