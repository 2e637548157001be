import { expect, test } from 'vitest';
import { registerMockServer, START_TIMEOUT_MS } from '../../src/testing/use-mock-server.js';

// The start hook's time depends on the config (an imported description of thousands of operations)
// and the machine, not on the test code: vitest's default 10 s hook timeout failed the README's
// example on a loaded CI machine. The helper gives its start hook a timeout of its own.
test('the start hook is registered with its own timeout, well above a runner default', () => {
  const timeouts: (number | undefined)[] = [];
  registerMockServer(
    { config: { apiKey: 'k' } },
    {
      beforeAll: (_fn, timeoutMs) => void timeouts.push(timeoutMs),
      beforeEach: () => undefined,
      afterAll: () => undefined,
    },
  );
  expect(timeouts).toEqual([START_TIMEOUT_MS]);
  expect(START_TIMEOUT_MS).toBeGreaterThanOrEqual(60_000);
});
