// A styled config's answers (limit headers in the styles of `limits.headers`, meters, `limitHeaders:`)
// are written over one prepared list per answer, as the usual answer's are: each answer's list is
// what a list made for it alone would hold, whatever the answer before it carried; and a reload that
// changes the style compiles its endpoints again (their prepared lists are the style's).
import { describe, expect, test } from 'vitest';
import { compileConfig } from '../../src/answer/compile.js';
import { ANSWER_PARTS } from '../../src/answer-parts.js';
import { createAnswerHeaders } from '../../src/http/answer-headers.js';
import { corsHeaders } from '../../src/answer/cors.js';
import type { LimitVerdict } from '../../src/pipeline/limits.js';
import { compiled, exchange } from './fakes.js';

const M = 1_000_000;
const metered = {
  limits: {
    rateLimit: { requests: 100, window: '1m' },
    meters: { tokens: { limit: 1000, window: '1m' }, spend: { limit: 5, window: 'month' } },
  },
  endpoints: [{ method: 'GET', path: '/users/:id', cost: { tokens: 10 }, response: { body: { id: 1 } } }],
};

describe('a styled answer on its prepared list', () => {
  test('each answer holds its own headers: other figures, an Origin echoed, a refusal’s Retry-After, no meters', async () => {
    const config = await compiled(metered);
    const style = config.limitStyle!;
    const endpoint = config.endpoints[0]!;
    const headers = createAnswerHeaders();
    const now = Date.parse('2026-05-01T00:00:00Z'); // the fake scope's clock (fakes.ts)
    const verdictOf = (used: number, extra: Partial<LimitVerdict> = {}): LimitVerdict => ({
      outcome: 'admitted',
      rate: { limit: 100, remaining: 99 - used, resetSeconds: 60 },
      retryAfterSeconds: 0,
      meters: config.config.limits.meters!.map((meter) => ({ meter, used: used * M, resetMs: 60_000 })),
      ...extra,
    });
    const answers: Array<{ origin?: string; verdict: LimitVerdict }> = [
      { verdict: verdictOf(10) },
      { verdict: verdictOf(20) },
      { origin: 'https://app.example', verdict: verdictOf(30) },
      { verdict: verdictOf(40, { retryAfterSeconds: 3 }) },
      { verdict: { outcome: 'admitted', rate: undefined, retryAfterSeconds: 0 } },
      { origin: 'https://app.example', verdict: verdictOf(50) },
      { verdict: verdictOf(60) },
    ];
    for (const { origin, verdict } of answers) {
      const x = exchange(config, { path: '/mock/users/1', headers: origin === undefined ? {} : { origin } });
      x.extra = corsHeaders(x.req, style);
      x.verdict = verdict;
      const expected = [...endpoint.headers, ...style.headers(verdict, now), ...x.extra];
      expect([...headers.filledHeaders(x, endpoint.headers, endpoint)]).toEqual(expected);
    }
  });

  test('a reload that changes the style alone (limitHeaders:) compiles the endpoints again', async () => {
    const before = await compiled(metered);
    // The same endpoint objects (a reload builds unchanged ones again as they were: config/build.ts).
    const same = await compileConfig({ ...before.config }, before, { parts: ANSWER_PARTS });
    expect(same.endpoints[0]).toBe(before.endpoints[0]);
    const openai = await compileConfig({ ...before.config, limitHeaders: ['openai'] }, before, { parts: ANSWER_PARTS });
    expect(openai.endpoints[0]).not.toBe(before.endpoints[0]);
    expect(openai.endpoints[0]!.answerHeaders).not.toBe(before.endpoints[0]!.answerHeaders);
  });
});
