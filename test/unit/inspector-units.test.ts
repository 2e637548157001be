import { describe, expect, it } from 'vitest';
import { maskKey, projectInfo } from '../../src/control/project-info.js';
import type { Entry } from '../../src/inspector/page/api.js';
import { curlOf, quote } from '../../src/inspector/page/curl.js';

function entry(overrides: Partial<Entry>): Entry {
  return {
    id: 1,
    time: '2026-11-23T10:00:00.000Z',
    method: 'GET',
    path: '/mock/users/42',
    query: {},
    headers: {},
    body: '',
    bodyTruncated: false,
    endpoint: 'GET /users/:id',
    response: 'response',
    status: 200,
    ms: 1,
    step: 'response',
    credential: { via: 'x-api-key', key: 'current' },
    notes: [],
    ...overrides,
  };
}

describe('copy as cURL', () => {
  it.each([
    ['x-api-key', `-H "X-API-Key: $MOCKAPI_KEY"`],
    ['bearer', `-H "Authorization: Bearer $MOCKAPI_KEY"`],
    ['basic', `-u "$MOCKAPI_KEY:"`],
  ])('sends the key as $MOCKAPI_KEY the way the request did (%s)', (via, flag) => {
    expect(curlOf(entry({ credential: { via, key: 'current' } }), 'http://127.0.0.1:4010')).toBe(
      `curl -g 'http://127.0.0.1:4010/mock/users/42' ${flag}`,
    );
  });

  it('sends no credential when the request had none, and never a redacted header', () => {
    const e = entry({
      credential: { via: 'none', key: 'unknown' },
      headers: { host: 'x', cookie: '<redacted>', 'x-trace': 'a' },
    });
    expect(curlOf(e, 'http://h')).toBe(`curl -g 'http://h/mock/users/42' -H 'x-trace: a'`);
  });

  it('quotes everything a client sent so the shell runs none of it (a body sent without a Content-Type is replayed without one, not as a form)', () => {
    const e = entry({
      method: 'PUT',
      query: { q: "a'b", tag: ['x', 'y z'] },
      body: `$(rm -rf /)'; echo "hi"`,
      headers: { 'x-evil': '`id`' },
    });
    expect(curlOf(e, 'http://h')).toBe(
      `curl -g -X PUT 'http://h/mock/users/42?q=a'\\''b&tag=x&tag=y%20z' -H "X-API-Key: $MOCKAPI_KEY" -H 'x-evil: \`id\`' -H 'Content-Type:' --data-raw '$(rm -rf /)'\\''; echo "hi"'`,
    );
    expect(quote("it's")).toBe(`'it'\\''s'`);
  });
});

describe('the project info', () => {
  it('a masked key shows at most 4 characters of it, and at most a quarter of a short one', () => {
    for (const key of [
      'developer_abc',
      'mk_9WbDq2vG0yq7Jc4TnR1sXe8ZkP3fLmA6',
      'x'.repeat(200),
      'abcdefgh',
      'abc',
      'a',
    ]) {
      const visible = maskKey(key).replace(/^…/, '');
      expect(visible.length).toBeLessThanOrEqual(Math.min(4, Math.floor(key.length / 4)));
      expect(key.endsWith(visible)).toBe(true);
    }
    expect(maskKey('developer_abc')).toBe('…abc');
    expect(maskKey('abc')).toBe('…');
  });

  it('masks the key, and gives it only when revealed', () => {
    expect(maskKey('mk_9WbDq2vG0yq7Jc4TnR1sXe8ZkP3fLmA6')).toBe('…LmA6');
    expect(maskKey('abcdefghijklmnop')).toBe('…mnop');
    expect(maskKey('short_key')).toBe('…ey');
    expect(projectInfo({ project: 'p', apiKey: 'mk_9WbDq2vG0yq7Jc4TnR1sXe8ZkP3fLmA6' }, false)).toEqual({
      project: 'p',
      maskedKey: '…LmA6',
    });
    expect(projectInfo({ project: 'p', apiKey: 'mk_9WbDq2vG0yq7Jc4TnR1sXe8ZkP3fLmA6' }, true).key).toBe(
      'mk_9WbDq2vG0yq7Jc4TnR1sXe8ZkP3fLmA6',
    );
  });
});

describe('trace of a key of keys:', () => {
  it("names the key and gives that key's limits, not the default key's", async () => {
    const { traceOf } = await import('../../src/inspector/page/trace.js');
    const usage = {
      month: '2026-11',
      requests: 1,
      quota: 100,
      remaining: 99,
      rateLimit: { limit: 10, remaining: 9, resetSeconds: 1 },
      keys: {
        ci: {
          month: '2026-11',
          requests: 5,
          quota: 5,
          remaining: 0,
          rateLimit: { limit: 3, remaining: 0, resetSeconds: 7 },
          plan: 'pro',
        },
      },
    };
    const limited = traceOf(
      entry({ step: 'rate_limit', status: 429, credential: { via: 'bearer', key: 'current', keyName: 'ci' } }),
      usage,
    );
    expect(limited).toContain('Auth: the current key named ci, sent in an Authorization: Bearer header.');
    expect(limited).toContain('Rate limit full: all 3 slots of the rolling window were taken → 429, not counted.');
    const quota = traceOf(
      entry({ step: 'quota', status: 429, credential: { via: 'bearer', key: 'current', keyName: 'ci' } }),
      usage,
    );
    expect(quota.some((line) => line.startsWith('Monthly quota used up: 5 requests'))).toBe(true);
  });
});

describe('trace of a simulated failure', () => {
  it('says what was sent: the message of the body, in either shape, or the body itself', async () => {
    const { sentWords } = await import('../../src/inspector/page/trace.js');
    expect(sentWords({ responseBody: '{"error":"simulated_failure","message":"Random failure triggered"}' })).toBe(
      '"Random failure triggered"',
    );
    expect(sentWords({ responseBody: '{"error":{"type":"api_error","message":"An unknown error occurred"}}' })).toBe(
      '"An unknown error occurred"',
    );
    expect(sentWords({ responseBody: 'upstream said no' })).toBe('upstream said no');
    expect(sentWords({ responseBody: 'x'.repeat(300) })).toBe(`${'x'.repeat(200)}…`);
    expect(sentWords({ responseBody: '' })).toBe('with an empty body');
    expect(sentWords({})).toBeUndefined();
  });
});

describe('trace of a meter refusal', () => {
  it('tells a full window, a reserve that can never fit and a spent budget apart, and marks a futile retry', async () => {
    const { traceOf } = await import('../../src/inspector/page/trace.js');
    const window = traceOf(
      entry({
        step: 'rate_limit',
        status: 429,
        notes: ['rate limited: tokens 95 of 100 tokens per 1m used, 10 asked'],
      }),
      undefined,
    );
    expect(window).toContain("A meter's window is full → 429; the request fits again after Retry-After.");
    const never = traceOf(
      entry({
        step: 'rate_limit',
        status: 429,
        notes: ['can never fit: tokens 200 asked, over the limit of 100 tokens per 1m'],
      }),
      undefined,
    );
    expect(never).toContain(
      "The request asks more than a meter's whole limit → 429 with Retry-After: 0: it can never fit; a client must ask for less.",
    );
    const spent = traceOf(
      entry({ step: 'quota', status: 429, notes: ['spend spent: 5 of 5 spend per month'] }),
      undefined,
    );
    expect(spent).toContain(
      'A budget is spent → 429: waiting does not bring it back (it must be raised or reset); a client must not retry.',
    );
    expect(spent.some((line) => line.startsWith('Futile retry'))).toBe(false);
    const again = traceOf(
      entry({ step: 'quota', status: 429, notes: ['spend spent: 5 of 5 spend per month', 'futile retry (2)'] }),
      undefined,
    );
    expect(again).toContain('Futile retry: this client sent again a request that a spent budget had refused.');
    expect(again).toContain('Server note: futile retry (2).');
  });
});
