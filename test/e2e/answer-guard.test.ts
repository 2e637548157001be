// A bug while an answer is made (here a RangeError, as a stack overflow throws) is answered 500
// `internal_error` and logged, wherever the answer is made: on arrival, after the request's body
// was read (a stream event), after a delay (a timer). It never escapes as an uncaught exception,
// which would end the process (vitest fails a test file on one). The bugs are planted: a leaf
// named `boom…` throws when rendered, and the answer headers of a path with `/explode` throw.
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { startMockServer, type MockServer } from '../../src/mock-server.js';

vi.mock(import('../../src/answer/leaf.js'), async (original) => {
  const real = await original();
  return {
    ...real,
    compileLeaf: async (...args: Parameters<typeof real.compileLeaf>) => {
      const leaf = await real.compileLeaf(...args);
      if (!leaf.label.startsWith('boom')) return leaf;
      return {
        ...leaf,
        render: () => {
          throw new RangeError('Maximum call stack size exceeded');
        },
      };
    },
  };
});

vi.mock(import('../../src/http/answer-headers.js'), async (original) => {
  const real = await original();
  return {
    ...real,
    createAnswerHeaders: (...args: Parameters<typeof real.createAnswerHeaders>) => {
      const made = real.createAnswerHeaders(...args);
      const explode = (path: string) => {
        if (path.includes('/explode')) throw new RangeError('Maximum call stack size exceeded');
      };
      return {
        ...made,
        filledHeaders: (...a: Parameters<typeof made.filledHeaders>) => (explode(a[0].path), made.filledHeaders(...a)),
        answerHeaders: (...a: Parameters<typeof made.answerHeaders>) => (explode(a[0].path), made.answerHeaders(...a)),
      };
    },
  };
});

const KEY = 'mk_guardTest0000000000000000000000001';
const INTERNAL = JSON.stringify({
  error: 'internal_error',
  message: 'mockapi failed to answer this request; see the server log',
});
const errors: string[] = [];
let server: MockServer;

beforeAll(async () => {
  server = await startMockServer({
    port: 0,
    logger: { info: () => {}, warn: () => {}, error: (line: string) => errors.push(line) },
    config: {
      apiKey: KEY,
      endpoints: [
        { method: 'POST', path: '/boom', response: { name: 'boom', body: { got: '${body}' } } },
        { method: 'POST', path: '/boom-later', response: { name: 'boom-later', delay: 5, body: { got: '${body}' } } },
        { method: 'POST', path: '/explode/static', delay: 5, response: { body: { fixed: true } } },
        { method: 'POST', path: '/explode/dynamic', delay: 5, response: { body: { got: '${body}' } } },
        { method: 'POST', path: '/fine', response: { body: { got: '${body}' } } },
      ],
    },
  });
});
afterAll(() => server?.close());

const post = async (path: string, body?: string) => {
  const res = await fetch(`${server.url}/mock${path}`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body,
    signal: AbortSignal.timeout(5000),
  });
  return { status: res.status, text: await res.text() };
};

test.each([
  ['without a body', '/boom', undefined],
  ['with a body', '/boom', '{"a":1}'],
  ['with a body and a delay', '/boom-later', '{"a":1}'],
  ['after a delay, a fixed answer', '/explode/static', undefined],
  ['after a delay, a dynamic answer', '/explode/dynamic', '{"a":1}'],
])('a throw while answering %s is a 500 internal_error', async (_name, path, body) => {
  errors.length = 0;
  expect(await post(path, body)).toEqual({ status: 500, text: INTERNAL });
  expect(errors).toHaveLength(1);
  expect(errors[0]).toMatch(
    new RegExp(`^internal error on POST /mock${path}: RangeError: Maximum call stack size exceeded`),
  );
  expect(await post('/fine', '{"a":1}')).toEqual({ status: 200, text: '{"got":{"a":1}}' });
});
