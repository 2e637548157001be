// SPEC §8 virtual clock: `serve --clock` starts it, POST /__mockapi/clock moves it, and the rate
// window, the quota month, Retry-After and the journal's times follow it.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCli, startServe, stopAll, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin, mock } from '../helpers/control.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { startMockServer } from '../../src/mock-server.js';
import { ControlError } from '../../src/control/control-error.js';
import { CLOCK_MAX, CLOCK_MIN, createVirtualClock } from '../../src/control/virtual-clock.js';
import { monthOf } from '../../src/state/state-file.js';
import { nextMonthStart } from '../../src/pipeline/quota.js';

const KEY = 'mk_clockKey000000000000000000000001';
const dir = useTempDir('mockapi-clock-');
let config: string;
let server: ServeProcess;
beforeAll(async () => {
  config = await writeConfig(
    dir.path,
    `apiKey: ${KEY}\nlimits:\n  rateLimit: { requests: 3, window: 1h }\n  monthlyQuota: 2\nendpoints:\n  - method: GET\n    path: /ping\n`,
  );
  server = await startServe([
    '-c',
    config,
    '--no-state',
    '--no-watch',
    '--log',
    'off',
    '--clock',
    '2026-11-30T23:59:50Z',
  ]);
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
    expect((await admin(server.url, 'GET', 'usage')).body).toMatchObject({
      month: '2026-11',
      requests: 2,
      quota: 2,
      remaining: 0,
    });

    const moved = await admin(server.url, 'POST', 'clock', { advance: '15s' });
    expect(moved.status).toBe(200);
    expect(moved.body.now.startsWith('2026-12-01T00:00:0')).toBe(true);
    expect((await admin(server.url, 'GET', 'usage')).body).toMatchObject({
      month: '2026-12',
      requests: 0,
      quota: 2,
      remaining: 2,
    });
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
    for (const [method, body] of [
      ['GET', undefined],
      ['POST', { advance: '1d' }],
    ] as const) {
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

describe('the clock stays between 0000-01-01 and 9999-12-31 (every time it gives is a valid Date)', () => {
  const RANGE = 'from 0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z';
  const PAST_END = (by: string) =>
    `advance ${by} would move the clock past 9999-12-31T23:59:59.999Z, the latest time it can show`;

  test('a move out of range is a 400 JSON error and changes nothing: an open event stream, the next request and the state file are unharmed', async () => {
    const stateFile = join(dir.path, 'range-state.json');
    const ranged = await startServe([
      '-c',
      config,
      '--state',
      stateFile,
      '--no-watch',
      '--log',
      'off',
      '--clock',
      '2026-11-15T12:00:00Z',
    ]);
    const events = await request(`${ranged.url}/__mockapi/events`);
    expect(events.statusCode).toBe(200);
    const before = Date.parse((await admin(ranged.url, 'GET', 'clock')).body.now);
    const refusals: [unknown, string][] = [
      [{ advance: '999999999999d' }, PAST_END('"999999999999d"')],
      [{ advance: 1e20 }, PAST_END('100000000000000000000')],
      [{ set: 1e20 }, `set must be an ISO time such as 2026-11-30T23:59:59Z, got 100000000000000000000`],
      [{ set: 0 }, `set must be an ISO time such as 2026-11-30T23:59:59Z, got 0`],
      [{ set: '0000-01-01T00:00:00+01:00' }, `set must be a time ${RANGE}, got "0000-01-01T00:00:00+01:00"`],
      [{ set: '9999-12-31T23:59:59.999-00:01' }, `set must be a time ${RANGE}, got "9999-12-31T23:59:59.999-00:01"`],
    ];
    for (const [body, message] of refusals) {
      const answer = await admin(ranged.url, 'POST', 'clock', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(answer.body).toEqual({ error: 'bad_request', message });
    }
    const after = Date.parse((await admin(ranged.url, 'GET', 'clock')).body.now);
    expect(after).toBeGreaterThanOrEqual(before);
    expect(after - before).toBeLessThan(60_000); // it ran on in real time, nothing more
    expect((await ping2(ranged.url)).status).toBe(200);
    let seen = '';
    for await (const chunk of events.body) {
      seen += String(chunk);
      if (/event: request\ndata: .*\n\n/.test(seen)) break;
    }
    expect(JSON.parse(/event: request\ndata: (.*)\n/.exec(seen)![1]!).time.startsWith('2026-11-15T12:')).toBe(true);
    events.body.destroy();
    expect(await ranged.stop()).toBe(0);
    expect(JSON.parse(await readFile(stateFile, 'utf8')).usage).toEqual({ month: '2026-11', requests: 1 });
  });

  test('the ends of the range are reachable, and a clock at the end stays there', async () => {
    const edge = await startServe([
      '-c',
      config,
      '--no-state',
      '--no-watch',
      '--log',
      'off',
      '--clock',
      '9999-12-31T23:59:59.999Z',
    ]);
    expect((await admin(edge.url, 'GET', 'clock')).body.now).toBe('9999-12-31T23:59:59.999Z');
    expect((await admin(edge.url, 'GET', 'usage')).body.month).toBe('9999-12');
    expect((await admin(edge.url, 'POST', 'clock', { advance: '1ms' })).body).toEqual({
      error: 'bad_request',
      message: PAST_END('"1ms"'),
    });
    expect((await admin(edge.url, 'POST', 'clock', { set: '0000-01-01T00:00:00Z' })).status).toBe(200);
    expect((await admin(edge.url, 'GET', 'usage')).body.month).toBe('0000-01');
    expect((await ping2(edge.url)).status).toBe(200);
    await edge.stop();
  });

  test('--clock out of range is wrong usage (exit 2)', async () => {
    for (const time of ['0000-01-01T00:00:00+00:01', '9999-12-31T23:59:59-01:00']) {
      const result = await runCli(['serve', '-c', config, '--no-state', '--clock', time]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `option '--clock <time>' argument '${time}' is invalid. must be a time ${RANGE}.`,
      );
    }
  });

  test('in process: a clock that would start or move out of range is refused, with a clear error', async () => {
    await expect(
      startMockServer({ config, port: 0, state: false, watch: false, clock: new Date(8.64e15) }),
    ).rejects.toThrow(new RangeError(`clock must be a time ${RANGE}, got "+275760-09-13T00:00:00.000Z"`));
    const object = await startMockServer({
      config,
      port: 0,
      state: false,
      watch: false,
      clock: '2026-11-15T12:00:00Z',
    });
    try {
      for (const move of [
        () => object.clock.set(1e20),
        () => object.clock.set(new Date(-8.64e15)),
        () => object.clock.advance('999999999999d'),
        () => object.clock.advance(8.64e15),
      ]) {
        const refused = await move().then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(refused).toBeInstanceOf(ControlError);
        expect(refused).toMatchObject({ status: 400, code: 'bad_request' });
      }
      expect((await object.clock.now()).startsWith('2026-11-15T12:')).toBe(true);
    } finally {
      await object.close();
    }
  });

  test('the virtual clock itself refuses to leave the range (fake real clock)', () => {
    let real = 1_000;
    expect(() => createVirtualClock(CLOCK_MAX + 1, () => real)).toThrow(RangeError);
    const clock = createVirtualClock(CLOCK_MAX - 10, () => real);
    expect(clock.advance(10)).toBe(true);
    expect(clock.now()).toBe(CLOCK_MAX);
    real += 5_000; // left running at the end, it stays there
    expect(clock.now()).toBe(CLOCK_MAX);
    expect(clock.advance(1)).toBe(false);
    expect(clock.set(CLOCK_MIN - 1)).toBe(false);
    expect(clock.set(Number.NaN)).toBe(false);
    expect(clock.now()).toBe(CLOCK_MAX);
    expect(clock.set(CLOCK_MIN)).toBe(true);
    expect(clock.now()).toBe(CLOCK_MIN);
    expect(clock.advance(-1)).toBe(false);
    expect(new Date(clock.now()).toISOString()).toBe('0000-01-01T00:00:00.000Z');
  });

  test('months of years below 1000 keep four digits; the next month of year 5 is in year 5', () => {
    expect(monthOf(Date.parse('0005-03-10T00:00:00Z'))).toBe('0005-03');
    expect(monthOf(CLOCK_MIN)).toBe('0000-01');
    expect(new Date(nextMonthStart(Date.parse('0005-03-10T00:00:00Z'))).toISOString()).toBe('0005-04-01T00:00:00.000Z');
  });
});

const ping2 = (url: string) => mock(url, 'GET', '/mock/ping', { headers: { 'x-api-key': KEY } });
