// The one reply (src/http/reply.ts) and its table of refusals (src/http/refusals.ts): what each
// refusal writes and journals, the limit headers of `x.verdict`, and `errors:` reshaping one.
import type { ServerResponse } from 'node:http';
import { describe, expect, test } from 'vitest';
import { createAnswerState } from '../../src/answer/answer-state.js';
import type { Exchange } from '../../src/http/exchange.js';
import { REFUSALS, type RefusalKind } from '../../src/http/refusals.js';
import { createReply, type JournalSink } from '../../src/http/reply.js';
import type { CompiledConfig } from '../../src/answer/compile.js';
import { flushWrites } from '../../src/http/write-batch.js';
import { silentLogger } from '../../src/logger.js';
import { compiled, exchange, fakeScope } from './fakes.js';

const config = await compiled({
  limits: { rateLimit: { requests: 5, window: '1m' } },
  endpoints: [{ method: 'GET', path: '/users/:id', response: { body: { id: 1 } } }],
});

/** A reply, and exchanges (`at`) whose session's journal records what was journaled. */
function recording() {
  const journaled: Array<{ step: string; status: number; note: string | readonly string[] | undefined }> = [];
  const reply = createReply({
    requestLog: { enabled: false, log() {}, flush() {}, close: async () => {} } as never,
    logger: silentLogger,
    retryAfters: { arrive() {}, answered() {} },
  });
  const journal: JournalSink = {
    enabled: true,
    record: (x, status, note) => void journaled.push({ step: x.step, status, note }),
  };
  const at = (c: CompiledConfig, request?: Parameters<typeof exchange>[1]) =>
    exchange(c, request, fakeScope(c, { journal, answers: createAnswerState({ ...c.config }) }));
  return { reply, journaled, at };
}

/** What `x`'s response was sent: status, headers as an object, body text. */
function written(x: Exchange) {
  const seen: { status?: number; headers?: Record<string, string>; body?: string } = {};
  x.res = {
    destroyed: false,
    headersSent: false,
    writeHead(status: number, headers: string[]) {
      seen.status = status;
      seen.headers = {};
      for (let i = 0; i < headers.length; i += 2) seen.headers[headers[i]!.toLowerCase()] = headers[i + 1]!;
    },
    end(body: Buffer | string) {
      seen.body = String(body);
    },
    cork() {},
    uncork() {},
    once() {},
  } as unknown as ServerResponse;
  return seen;
}

describe('reply.refuse', () => {
  test('each refusal of the table: its status, body, journal step and note', () => {
    const { reply, journaled, at } = recording();
    for (const kind of Object.keys(REFUSALS) as RefusalKind[]) {
      const x = at(config);
      const seen = written(x);
      reply.refuse(x, kind, undefined, 'a detail');
      flushWrites();
      const refusal = REFUSALS[kind];
      expect(seen.status, kind).toBe(refusal.status);
      expect(seen.headers?.['content-type'], kind).toBe('application/json; charset=utf-8');
      expect(JSON.parse(seen.body!), kind).toHaveProperty(kind === 'quotaExceeded' ? 'code' : 'error');
      expect(journaled.at(-1), kind).toEqual({ step: refusal.step, status: refusal.status, note: refusal.note });
    }
    expect(journaled.map((j) => j.step)).toEqual([
      'bad_request',
      'bad_request',
      'auth',
      'auth',
      'rate_limit',
      'rate_limit',
      'quota',
      'quota',
      'match',
      'failure',
    ]);
  });

  test('a 401 carries its challenge; a refusal after the limits step carries the limit headers of x.verdict; a note given wins', () => {
    const { reply, journaled, at } = recording();
    const unauthorized = at(config);
    const seen401 = written(unauthorized);
    reply.refuse(unauthorized, 'missingKey');
    flushWrites();
    expect(seen401.headers?.['www-authenticate']).toBe('Bearer realm="mockapi"');
    expect(seen401.headers?.['ratelimit-limit']).toBeUndefined();

    const limited = at(config);
    limited.verdict = {
      outcome: 'rate_limited',
      rate: { limit: 5, remaining: 0, resetSeconds: 42 },
      retryAfterSeconds: 42,
    };
    const seen429 = written(limited);
    reply.refuse(limited, 'rateLimited');
    reply.refuse(at(config), 'notFound', 'did you mean GET /users/:id?');
    flushWrites();
    expect(seen429.headers).toMatchObject({ 'ratelimit-limit': '5', 'ratelimit-remaining': '0', 'retry-after': '42' });
    expect(journaled.at(-1)).toEqual({ step: 'match', status: 404, note: 'did you mean GET /users/:id?' });
  });

  test('errors: reshapes a refusal by its kind', async () => {
    const reshaped = await compiled({
      errors: { notFound: { status: 410, body: { gone: '${error.path}' } } },
      endpoints: [],
    });
    const { reply, journaled, at } = recording();
    const x = at(reshaped, { path: '/mock/old' });
    const seen = written(x);
    reply.refuse(x, 'notFound');
    flushWrites();
    expect(seen.status).toBe(410);
    expect(JSON.parse(seen.body!)).toEqual({ gone: '/old' });
    expect(journaled).toEqual([{ step: 'match', status: 410, note: undefined }]);
  });
});
