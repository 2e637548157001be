// Black-box tests of `limits.headers` and `limits.quotaRetryAfter` (SPEC §10): each style as a
// client reads it — `ietf` through a real RFC 9651 structured-field parser — and CORS exposing
// whichever headers are sent.
import { afterAll, describe, expect, test } from 'vitest';
import { parseList } from 'structured-headers';
import { startServe, stopAll, tempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_headersTest0000000000000000000001';
afterAll(stopAll);

async function serve(limits: string[]): Promise<ServeProcess> {
  const dir = await tempDir('mockapi-limit-headers-');
  const yaml = [
    `apiKey: ${KEY}`,
    'limits:',
    ...limits.map((l) => `  ${l}`),
    'endpoints:',
    '  - method: GET',
    '    path: /ok',
    '    response: { body: { ok: true } }',
    '',
  ].join('\n');
  return startServe(['-c', await writeConfig(dir, yaml), '--no-state', '--no-watch']);
}

async function get(proc: ServeProcess, headers: Record<string, string> = {}): Promise<Response> {
  const res = await fetch(`${proc.mock}/ok`, { headers: { 'x-api-key': KEY, ...headers } });
  await res.arrayBuffer();
  return res;
}

/** A structured-field list as `{ name: { param: value } }`. */
function policies(value: string | null): Record<string, Record<string, unknown>> {
  expect(value).not.toBeNull();
  return Object.fromEntries(parseList(value!).map(([name, params]) => [String(name), Object.fromEntries(params)]));
}

const LIMIT_NAMES = [
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'ratelimit-policy',
  'ratelimit',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
];
function limitHeaderNames(res: Response): string[] {
  return LIMIT_NAMES.filter((n) => res.headers.has(n));
}

describe('limits.headers', () => {
  test('legacy is the default: RateLimit-Limit/-Remaining/-Reset, exposed to browsers', async () => {
    const proc = await serve(['rateLimit: { requests: 3, window: 1m }']);
    const res = await get(proc, { origin: 'http://app.test' });
    expect(limitHeaderNames(res)).toEqual(['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']);
    expect(res.headers.get('ratelimit-remaining')).toBe('2');
    expect(res.headers.get('access-control-expose-headers')).toBe(
      'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After',
    );
    await proc.stop();
  });

  test('ietf: RateLimit-Policy and RateLimit parse as RFC 9651 lists with a window and a month policy', async () => {
    const proc = await serve(['rateLimit: { requests: 100, window: 1m }', 'monthlyQuota: 10000', 'headers: ietf']);
    await get(proc);
    const res = await get(proc, { origin: 'http://app.test' });
    expect(limitHeaderNames(res)).toEqual(['ratelimit-policy', 'ratelimit']);
    expect(res.headers.get('ratelimit-policy')).toBe('"window";q=100;w=60, "month";q=10000');
    expect(policies(res.headers.get('ratelimit-policy'))).toEqual({ window: { q: 100, w: 60 }, month: { q: 10000 } });
    const now = policies(res.headers.get('ratelimit'));
    expect(now.window).toEqual({ r: 98, t: 60 });
    expect(now.month!.r).toBe(9998);
    expect(now.month!.t).toBeGreaterThan(0);
    expect(now.month!.t).toBeLessThanOrEqual(31 * 86400);
    expect(res.headers.get('access-control-expose-headers')).toBe('RateLimit-Policy, RateLimit, Retry-After');
    await proc.stop();
  });

  test('ietf without a quota has the window policy only; with only a quota, the month only', async () => {
    const rate = await serve(['rateLimit: { requests: 5, window: 90s }', 'headers: [ietf]']);
    expect(policies((await get(rate)).headers.get('ratelimit-policy'))).toEqual({ window: { q: 5, w: 90 } });
    await rate.stop();
    const month = await serve(['monthlyQuota: 3', 'headers: ietf']);
    const res = await get(month);
    expect(policies(res.headers.get('ratelimit-policy'))).toEqual({ month: { q: 3 } });
    expect(policies(res.headers.get('ratelimit')).month!.r).toBe(2);
    await month.stop();
  });

  test('x: X-RateLimit-* describing the rate window, the reset in epoch seconds', async () => {
    const proc = await serve(['rateLimit: { requests: 3, window: 1m }', 'monthlyQuota: 100', 'headers: x']);
    const before = Math.floor(Date.now() / 1000);
    const res = await get(proc, { origin: 'http://app.test' });
    const after = Math.ceil(Date.now() / 1000);
    expect(limitHeaderNames(res)).toEqual(['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']);
    expect(res.headers.get('x-ratelimit-limit')).toBe('3');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('2');
    const reset = Number(res.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThanOrEqual(before + 60);
    expect(reset).toBeLessThanOrEqual(after + 61);
    expect(res.headers.get('access-control-expose-headers')).toBe(
      'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After',
    );
    await proc.stop();
  });

  test('none: no limit headers, but a 429 still carries Retry-After', async () => {
    const proc = await serve(['rateLimit: { requests: 1, window: 1m }', 'headers: none']);
    const ok = await get(proc);
    expect(limitHeaderNames(ok)).toEqual([]);
    const refused = await get(proc, { origin: 'http://app.test' });
    expect(refused.status).toBe(429);
    expect(limitHeaderNames(refused)).toEqual([]);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('access-control-expose-headers')).toBe('Retry-After');
    await proc.stop();
  });

  test('a list sends every style named; the preflight exposes them too', async () => {
    const proc = await serve(['rateLimit: { requests: 3, window: 1m }', 'headers: [legacy, x]']);
    const res = await get(proc);
    expect(limitHeaderNames(res)).toEqual([
      'ratelimit-limit',
      'ratelimit-remaining',
      'ratelimit-reset',
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
    ]);
    expect(res.headers.get('access-control-expose-headers')).toBe(
      'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After',
    );
    const preflight = await fetch(`${proc.mock}/ok`, {
      method: 'OPTIONS',
      headers: { origin: 'http://app.test', 'access-control-request-method': 'GET' },
    });
    expect(preflight.headers.get('access-control-expose-headers')).toContain('X-RateLimit-Reset');
    await proc.stop();
  });
});

describe('limits.quotaRetryAfter', () => {
  async function quota429(setting: string[]): Promise<Response> {
    const proc = await serve(['monthlyQuota: 1', ...setting]);
    await get(proc);
    const res = await get(proc);
    await proc.stop();
    expect(res.status).toBe(429);
    return res;
  }

  test('until-reset (default): the seconds until the next month begins', async () => {
    for (const setting of [[], ['quotaRetryAfter: until-reset']]) {
      const seconds = Number((await quota429(setting)).headers.get('retry-after'));
      expect(seconds).toBeGreaterThanOrEqual(1);
      expect(seconds).toBeLessThanOrEqual(31 * 86400);
    }
  });

  test('a duration: that many seconds (rounded up)', async () => {
    expect((await quota429(['quotaRetryAfter: 1h'])).headers.get('retry-after')).toBe('3600');
    expect((await quota429(['quotaRetryAfter: 1500'])).headers.get('retry-after')).toBe('2');
  });

  test('none: no Retry-After on the quota 429; the rate limit 429 keeps its own', async () => {
    expect((await quota429(['quotaRetryAfter: none'])).headers.has('retry-after')).toBe(false);
    const proc = await serve(['rateLimit: { requests: 1, window: 1m }', 'quotaRetryAfter: none']);
    await get(proc);
    expect((await get(proc)).headers.get('retry-after')).not.toBeNull();
    await proc.stop();
  });
});
