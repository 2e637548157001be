import { createAnswerRandom, type RequestContext } from '../../src/expression/index.js';

/** 2026-03-04T05:06:07.000Z: the fixed clock of the answer tests. */
export const TEST_NOW = Date.UTC(2026, 2, 4, 5, 6, 7);

/** A request context for unit tests: a fixed clock, seed 42, endpoint `GET /t`, request 1, unless overridden. */
export function makeContext(overrides: Partial<RequestContext> = {}): RequestContext {
  return {
    params: {},
    query: {},
    headers: {},
    cookies: {},
    body: undefined,
    request: 1,
    state: {},
    now: TEST_NOW,
    random: createAnswerRandom(42, 'GET /t', overrides.request ?? 1),
    ...overrides,
  };
}
