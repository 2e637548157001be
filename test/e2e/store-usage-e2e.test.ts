// SPEC §8 and §12: with a shared store, the admin API's usage and reset are the store's — every
// server of the project shows the same month and window, and a reset on one is a reset for all,
// answered once Redis applied it. With Redis away, usage still answers (marked by X-Mockapi-Store,
// its body exactly SPEC §8's), reset is a 503.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockServer } from '../../src/mock-server.js';
import { connectMockServer } from '../../src/connect.js';
import { runCli, startServe, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { hammer } from '../helpers/load.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

const KEY = 'mk_store_usage_test';
const NO_OTHER_PARTS = { journal: false, sequences: false, scenarios: false, clock: false, stubs: false };
const dir = useTempDir('mockapi-store-usage-');
let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis({ tcp: true });
});
afterAll(() => redis?.stop());

async function serveTwo(project: string, limits: string): Promise<{ config: string; servers: ServeProcess[] }> {
  const yaml = `project: ${project}\napiKey: ${KEY}\nlimits:\n${limits}\n  store: ${redis.url}\nendpoints:\n  - method: GET\n    path: /a\n`;
  const config = await writeConfig(dir.path, yaml, `${project}.yaml`);
  const servers = await Promise.all(
    [0, 1].map(() => startServe(['-c', config, '--no-state', '--log', 'off', '--no-watch'])),
  );
  return { config, servers };
}

/** An admin call; a hang shows as a failure after 20 s rather than as the test's timeout. */
async function admin(
  server: ServeProcess,
  path: string,
  body?: unknown,
): Promise<{ status: number; store: string | null; body: Record<string, any> }> {
  const res = await fetch(`${server.url}/__mockapi/${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  return {
    status: res.status,
    store: res.headers.get('x-mockapi-store'),
    body: (await res.json()) as Record<string, any>,
  };
}

const get = (server: ServeProcess) => fetch(`${server.mock}/a`, { headers: { 'x-api-key': KEY } });
const thisMonth = () => new Date().toISOString().slice(0, 7);
const storeUsage = async (config: string) =>
  JSON.parse((await runCli(['usage', '-c', config, '--store', redis.url, '--json'])).stdout) as Record<string, unknown>;

/** Reads `GET /__mockapi/events` until a `usage` event satisfies `accept`. */
async function usageEvent(
  server: ServeProcess,
  accept: (data: Record<string, any>) => boolean,
  during: () => Promise<unknown>,
): Promise<Record<string, any>> {
  const abort = new AbortController();
  const res = await fetch(`${server.url}/__mockapi/events`, { signal: abort.signal });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  await reader.read(); // the stream's opening comment: subscribed
  await during();
  let text = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`events ended without the usage event:\n${text}`);
      text += value;
      for (const block of text.split('\n\n')) {
        const data = /^event: usage\ndata: (.*)$/m.exec(block)?.[1];
        if (data !== undefined && accept(JSON.parse(data))) return JSON.parse(data);
      }
    }
  } finally {
    abort.abort();
  }
}

describe('the admin API of servers sharing a store (SPEC §8, §12)', () => {
  it('GET /__mockapi/usage and the usage events show the shared month and window on either server', async () => {
    const { config, servers } = await serveTwo(
      'shown',
      '  rateLimit:\n    requests: 10\n    window: 1h\n  monthlyQuota: 1000',
    );
    const [a, b] = servers as [ServeProcess, ServeProcess];
    await hammer([`${a.mock}/a`], KEY, { clients: 1, max: 3 });
    await hammer([`${b.mock}/a`], KEY, { clients: 1, max: 2 });
    const expected = {
      month: thisMonth(),
      requests: 5,
      quota: 1000,
      remaining: 995,
      rateLimit: { limit: 10, remaining: 5, resetSeconds: expect.any(Number) },
    };
    for (const server of servers) {
      const { status, store, body } = await admin(server, 'usage');
      expect(status).toBe(200);
      expect(body).toEqual(expected); // exactly SPEC §8's fields, with a store too
      expect(store).toBe('reachable');
      expect(body.rateLimit.resetSeconds).toBeGreaterThan(3500);
      expect(body.rateLimit.resetSeconds).toBeLessThanOrEqual(3600);
    }
    expect(await storeUsage(config)).toMatchObject({ month: thisMonth(), requests: 5 });
    // The inspector's gauges follow the events: one after a request on A counts B's too.
    const event = await usageEvent(
      a,
      (data) => data.requests === 6,
      () => get(a),
    );
    expect(event).toEqual({
      ...expected,
      requests: 6,
      remaining: 994,
      rateLimit: { limit: 10, remaining: 4, resetSeconds: expect.any(Number) },
    });
  });

  it('POST /__mockapi/reset {"usage":true} on one server zeroes the month for both and for mockapi usage --store', async () => {
    const { config, servers } = await serveTwo(
      'reset',
      '  rateLimit:\n    requests: 10\n    window: 1h\n  monthlyQuota: 1000',
    );
    const [a, b] = servers as [ServeProcess, ServeProcess];
    await hammer([`${a.mock}/a`], KEY, { clients: 1, max: 4 });
    await hammer([`${b.mock}/a`], KEY, { clients: 1, max: 3 });
    expect(await storeUsage(config)).toMatchObject({ requests: 7 });

    const reset = await admin(a, 'reset', { usage: true, rateLimit: false, ...NO_OTHER_PARTS });
    expect(reset.status).toBe(200);
    expect(reset.body.reset).toEqual(['usage']);
    // The month is zeroed; the window (not reset) still holds the seven.
    expect(reset.body.usage).toEqual({
      month: thisMonth(),
      requests: 0,
      quota: 1000,
      remaining: 1000,
      rateLimit: { limit: 10, remaining: 3, resetSeconds: expect.any(Number) },
    });
    expect((await admin(b, 'usage')).body).toMatchObject({ requests: 0, remaining: 1000, rateLimit: { remaining: 3 } });
    expect(await storeUsage(config)).toMatchObject({ requests: 0 });

    expect((await get(b)).status).toBe(200);
    expect((await admin(a, 'usage')).body).toMatchObject({ requests: 1, remaining: 999 });
    expect(await storeUsage(config)).toMatchObject({ requests: 1 });
  });

  it('POST /__mockapi/reset {"rateLimit":true} answers once the shared window is empty: the next request on the other server has the full window', async () => {
    const { servers } = await serveTwo('window', '  rateLimit:\n    requests: 3\n    window: 1h');
    const [a, b] = servers as [ServeProcess, ServeProcess];
    for (let round = 0; round < 10; round++) {
      // The window holds the previous round's last request: fill it up to `requests` across both servers.
      for (const server of round === 0 ? [a, b, a] : [a, b]) expect((await get(server)).status).toBe(200);
      expect((await get(b)).status).toBe(429);
      const reset = await admin(a, 'reset', { usage: false, rateLimit: true, ...NO_OTHER_PARTS });
      expect(reset.status).toBe(200);
      expect(reset.body.usage.rateLimit).toEqual({ limit: 3, remaining: 3, resetSeconds: 0 });
      const next = await get(b);
      expect(next.status, `round ${round}`).toBe(200);
      expect(next.headers.get('ratelimit-remaining')).toBe('2');
    }
  });

  it('with Redis away: GET usage answers the last known figures, marked; reset of usage is a 503 that resets nothing else', async () => {
    const { config, servers } = await serveTwo(
      'away',
      '  rateLimit:\n    requests: 10\n    window: 1h\n  storeDown: open',
    );
    const [a] = servers as [ServeProcess];
    await hammer([`${a.mock}/a`], KEY, { clients: 1, max: 3 });
    expect(await admin(a, 'usage')).toMatchObject({ store: 'reachable', body: { requests: 3 } });

    await redis.kill();
    const down = await admin(a, 'usage');
    expect(down.status).toBe(200);
    expect(down.store).toBe('unreachable');
    expect(down.body).toMatchObject({
      month: thisMonth(),
      requests: 3,
      quota: null,
      remaining: null,
      rateLimit: { limit: 10 },
    });
    expect(Object.keys(down.body)).toEqual(['month', 'requests', 'quota', 'remaining', 'rateLimit']);
    // storeDown: open admits under this server's own window and counts locally: both show.
    await hammer([`${a.mock}/a`], KEY, { clients: 1, max: 2 });
    expect(await admin(a, 'usage')).toMatchObject({
      store: 'unreachable',
      body: { requests: 5, rateLimit: { limit: 10, remaining: 8 } },
    });

    const journal = (await admin(a, 'requests/count')).body.count as number;
    const refused = await admin(a, 'reset', {});
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({
      error: 'store_unavailable',
      message: expect.stringMatching(/cannot be reached.*repeat the call/),
    });
    expect((await admin(a, 'requests/count')).body.count).toBe(journal); // nothing else was reset
    const journalOnly = await admin(a, 'reset', { usage: false, rateLimit: false });
    expect(journalOnly.status).toBe(200);
    expect(journalOnly.body.usage).toMatchObject({ requests: 5 });

    // Back (empty, as restarted): the two counted alone reach the shared month, and usage is shared again.
    await redis.restart();
    await waitFor(async () => (await admin(a, 'usage')).store === 'reachable', 10_000, 50);
    await waitFor(async () => (await admin(a, 'usage')).body.requests === 2, 10_000, 50);
    expect(await storeUsage(config)).toMatchObject({ requests: 2 });
    const reset = await admin(a, 'reset', { usage: true, rateLimit: true, ...NO_OTHER_PARTS });
    expect(reset.status).toBe(200);
    expect(reset.body.usage).toMatchObject({ requests: 0, rateLimit: { limit: 10, remaining: 10 } });
  });

  it('with Redis hanging: usage answers once the command times out, marked; a reset is a 503, not a 200 before Redis applied it', async () => {
    const { servers } = await serveTwo('hang', '  monthlyQuota: 50');
    const [a] = servers as [ServeProcess];
    await hammer([`${a.mock}/a`], KEY, { clients: 1, max: 2 });
    expect(await admin(a, 'usage')).toMatchObject({ store: 'reachable', body: { requests: 2, remaining: 48 } });
    redis.pause();
    try {
      const [usage, reset] = await Promise.all([
        admin(a, 'usage'),
        admin(a, 'reset', { usage: true, rateLimit: false, ...NO_OTHER_PARTS }),
      ]);
      expect(usage).toEqual({
        status: 200,
        store: 'unreachable',
        body: { month: thisMonth(), requests: 2, quota: 50, remaining: 48, rateLimit: null },
      });
      expect(reset.status).toBe(503);
      expect(reset.body.error).toBe('store_unavailable');
    } finally {
      redis.resume();
    }
    await waitFor(async () => (await admin(a, 'usage')).store === 'reachable', 10_000, 50);
  });
});

describe('in process with a store (SPEC §6, §8)', () => {
  it('startMockServer and connectMockServer give the same shared usage and reset it for every server', async () => {
    const config = {
      project: 'calls',
      apiKey: KEY,
      limits: { monthlyQuota: 100, store: redis.url },
      endpoints: [{ method: 'GET', path: '/a' }],
    };
    const [one, two] = await Promise.all([startMockServer({ config, port: 0 }), startMockServer({ config, port: 0 })]);
    try {
      for (const server of [one, two, one])
        expect((await fetch(`${server.url}/mock/a`, { headers: { 'x-api-key': KEY } })).status).toBe(200);
      const client = connectMockServer(two.url);
      const shown = { month: thisMonth(), requests: 3, quota: 100, remaining: 97, rateLimit: null };
      expect(await one.usage()).toEqual(shown);
      expect(await client.usage()).toEqual(await two.usage());
      expect(await two.usage()).toEqual(shown);
      const reset = await client.reset({ usage: true });
      expect(reset.usage).toEqual({ ...shown, requests: 0, remaining: 100 });
      expect(await one.usage()).toEqual(reset.usage);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});
