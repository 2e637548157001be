// Fakes for unit tests of single request steps: a compiled config, an exchange, a reply that records
// what a step asked of it, and a `next` spy. No server, no port, no socket.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { vi } from 'vitest';
import { compileConfig, type CompiledConfig } from '../../src/answer/compile.js';
import { ANSWER_PARTS } from '../../src/answer-parts.js';
import { configFromObject } from '../../src/config/load.js';
import { createAnswerState } from '../../src/answer/answer-state.js';
import type { Exchange } from '../../src/http/exchange.js';
import type { RequestScope } from '../../src/http/scope.js';
import { createGate } from '../../src/pipeline/limits.js';
import { createMemoryUsageStore } from '../../src/state/usage-store.js';
import type { Reply } from '../../src/http/reply.js';
import type { Next } from '../../src/http/steps.js';

export const KEY = 'mk_unitSteps00000000000000000000001';

/** A config object (as in mockapi.yaml) loaded and compiled; throws on a config error. */
export async function compiled(config: Record<string, unknown>): Promise<CompiledConfig> {
  const loaded = configFromObject({ apiKey: KEY, ...config }, process.cwd());
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.issues));
  return compileConfig(loaded.config, undefined, { parts: ANSWER_PARTS });
}

/**
 * The parts of a default session for unit tests: a journal that keeps nothing, a fixed clock, fresh
 * scenario states and an in-memory gate; `parts` replaces any of them.
 */
export function fakeScope(config: CompiledConfig, parts: Partial<RequestScope> = {}): RequestScope {
  return {
    id: '',
    journal: { enabled: false, record() {} },
    clock: () => Date.parse('2026-05-01T00:00:00Z'),
    answers: createAnswerState(config.config),
    limits: createGate(createMemoryUsageStore()),
    keyLimits: undefined,
    key: undefined,
    ...parts,
  };
}

/** The exchange of one request, as the handler's front leaves it for the steps (in `scope`, default: a fresh {@link fakeScope}). */
export function exchange(
  config: CompiledConfig,
  request: { method?: string; path?: string; headers?: Record<string, string> } = {},
  scope: RequestScope = fakeScope(config),
): Exchange {
  const method = request.method ?? 'GET';
  const path = request.path ?? '/mock/users/1';
  const headers = { host: '127.0.0.1', ...request.headers };
  const req = {
    method,
    url: path,
    headers,
    rawHeaders: Object.entries(headers).flat(),
    httpVersion: '1.1',
    socket: {},
    complete: true,
  } as unknown as IncomingMessage;
  const res = {
    destroyed: false,
    headersSent: false,
    once() {},
    writeHead() {},
    end() {},
  } as unknown as ServerResponse;
  return {
    req,
    res,
    started: 0,
    method,
    path,
    mockPath: path.startsWith('/mock/') ? path.slice('/mock'.length) : path,
    compiled: config,
    scope,
    extra: [],
    answer: null,
    body: undefined,
    step: 'response',
    endpoint: undefined,
    verdict: undefined,
    journalBody: undefined,
    bodyTruncated: false,
    answerHeaders: [],
    answerBody: undefined,
    keyVerdict: undefined,
  };
}

/** What a step asked of the reply, in order: `refuse missingKey`, `send response 200`… */
export interface FakeReply extends Reply {
  readonly calls: string[];
}

/** A reply that writes nothing and records each call as a line. */
export function fakeReply(): FakeReply {
  const calls: string[] = [];
  const reply: FakeReply = {
    calls,
    send: (_x, step, status) => void calls.push(`send ${step} ${status}`),
    json: (_x, step, status) => void calls.push(`json ${step} ${status}`),
    refuse: (_x, kind, note) => void calls.push(note === undefined ? `refuse ${kind}` : `refuse ${kind}: ${note}`),
    own: () => false,
    limits: () => [],
    ended: (_x, step, status) => void calls.push(`ended ${step} ${status}`),
    faultStream: (_x, status) => void calls.push(`faultStream ${status}`),
    pipe: async (_x, step, status) => void calls.push(`pipe ${step} ${status}`),
    guarded: (x, fn, ...args) => fn(x, ...args),
    failed: (_x, err) => void calls.push(`failed ${(err as Error).message}`),
    retryAfters: { arrive: () => void calls.push('arrive'), answered: () => {} },
    withCors: (_x, headers) => headers,
    filledHeaders: (_x, headers) => headers,
    answerHeaders: (_x, rendered) => rendered.headers,
  };
  return reply;
}

/** A `next` spy. */
export function nextSpy() {
  return vi.fn<Next>();
}
