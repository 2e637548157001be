// SPEC §8 virtual clock: `serve --clock` starts it, POST /__mockapi/clock moves it, and the rate
// window, the quota month, Retry-After and the journal's times follow it.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCli, startServe, stopAll, useTempDir, writeConfig, type ServeProcess } from './helpers/cli.js';
import { admin, mock } from './helpers/control.js';

const KEY = 'mk_clockKey000000000000000000000001';
const dir = useTempDir('mockapi-clock-');
let config: string;
let server: ServeProcess;
beforeAll(async () => {
  config = await writeConfig(dir.path, `apiKey: ${KEY}\nlimits:\n  rateLimit: { requests: 3, window: 1h }\n  monthlyQuota: 2\nendpoints:\n  - method: GET\n    path: /ping\n`);
  server = await startServe(['-c', config, '--no-state', '--no-watch', '--log', 'off', '--clock', '2026-11-30T23:59:50Z']);
});
afterAll(stopAll);
const ping = () => mock(server.url, 'GET', '/mock/ping', { headers: { 'x-api-key': KEY } });

describe('virtual clock', () => {
  test('crossing a month end resets the quota count as the real month change does; Retry-After and journal times follow the clock', async () => {
    const now = (await admin(server.url, 'GET', 'clock')).body.now as string;
    expect(now.startsWith('2026-11-30T23:59:5')).toBe(true);
    expect((await ping()).status).toBe(200);
    expect((await ping()).status).toBe(200);
    const refused = await ping();
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.text)).toEqual({ error: 'Monthly request quota exceeded', code: 'QUOTA_EXCEEDED' });
    // Seconds to 2026-12-01T00:00:00Z on the virtual clock, not on the machine's.
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(10);
    expect((await admin(server.url, 'GET', 'usage')).body).toMatchObject({ month: '2026-11', requests: 2, quota: 2, remaining: 0 });

    const moved = await admin(server.url, 'POST', 'clock', { advance: '15s' });
    expect(moved.status).toBe(200);
    expect(moved.body.now.startsWith('2026-12-01T00:00:0')).toBe(true);
    expect((await admin(server.url, 'GET', 'usage')).body).toMatchObject({ month: '2026-12', requests: 0, quota: 2, remaining: 2 });
    const next = await ping();
    expect(next.status).toBe(200);
    // The rate window (1 h) still holds November's two admissions: one slot was left.
    expect(next.headers['ratelimit-remaining']).toBe('0');
    const limited = await ping();
    expect(limited.status).toBe(429);
    expect(JSON.parse(limited.text).message).toBe('Rate limit exceeded');

    const times = (await admin(server.url, 'GET', 'requests')).body.requests.map((e: any) => e.time.slice(0, 7));
    expect(times).toEqual(['2026-11', '2026-11', '2026-11', '2026-12', '2026-12']);
  });

  test('advancing past the window frees the rate limit; set moves to a given time', async () => {
    expect((await admin(server.url, 'POST', 'clock', { advance: '1h' })).status).toBe(200);
    expect((await ping()).status).toBe(200);
    const set = await admin(server.url, 'POST', 'clock', { set: '2027-01-31T12:00:00Z' });
    expect(set.status).toBe(200);
    expect(set.body.now.startsWith('2027-01-31T12:00:0')).toBe(true);
    expect((await admin(server.url, 'GET', 'usage')).body.month).toBe('2027-01');
  });

  test('bad clock bodies are 400', async () => {
    expect((await admin(server.url, 'POST', 'clock', { set: 'tomorrow' })).body.error).toBe('bad_request');
    expect((await admin(server.url, 'POST', 'clock', { advance: '-5s' })).status).toBe(400);
    expect((await admin(server.url, 'POST', 'clock', {})).status).toBe(400);
  });

  test('without --clock, time cannot be moved: 409', async () => {
    const real = await startServe(['-c', config, '--no-state', '--no-watch', '--log', 'off']);
    for (const [method, body] of [['GET', undefined], ['POST', { advance: '1d' }]] as const) {
      const answer = await admin(real.url, method, 'clock', body);
      expect(answer.status).toBe(409);
      expect(answer.body.error).toBe('no_virtual_clock');
    }
    await real.stop();
  });

  test('--clock must be an ISO time with a zone (exit 2)', async () => {
    const result = await runCli(['serve', '-c', config, '--clock', 'next tuesday']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--clock');
  });
});
