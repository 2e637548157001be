// Webhook delivery in one process (startMockServer): Retry-After, redirects and timeouts, the
// seeded streams of their own (a webhook never moves which requests fail), loopback-only URLs
// from request data, and every timer and socket released after 1,000 deliveries to a dead port.
import { afterEach, describe, expect, test } from 'vitest';
import { readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startMockServer, type MockServer } from '../../src/index.js';
import { waitFor } from '../helpers/cli.js';

const KEY = 'mk_webhooksDelivery0000000000000001';
const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
});

async function receiver(
  answer: (n: number, res: import('node:http').ServerResponse) => void,
): Promise<{ url: string; hits: number[]; server: Server }> {
  const hits: number[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits.push(Date.now());
      answer(hits.length, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  open.push({ close: () => new Promise((r) => server.close(r)) });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, server };
}

async function serve(config: Record<string, unknown>, clock = '2026-01-01T00:00:00Z'): Promise<MockServer> {
  const server = await startMockServer({ config: { apiKey: KEY, ...config }, port: 0, clock });
  open.push(server);
  return server;
}

const target = (url: string, retry: unknown = { schedule: ['10m', '10m'], timeout: '300ms' }, chaos?: unknown) => ({
  webhooks: {
    targets: {
      app: {
        url,
        sign: { scheme: 'github', secret: 'delivery-secret' },
        retry,
        ...(chaos === undefined ? {} : { chaos }),
      },
    },
    events: { ping: { envelope: 'github', data: { zen: 'hi' } } },
  },
});

describe('outcomes of an attempt', () => {
  test('429 with Retry-After: the next attempt waits what the receiver asked, not the schedule', async () => {
    const r = await receiver((n, res) =>
      n === 1 ? res.writeHead(429, { 'retry-after': '30' }).end() : res.writeHead(204).end(),
    );
    const server = await serve(target(`${r.url}/hook`));
    const sent = await server.webhooks.trigger({ event: 'ping', to: 'app' });
    const [first] = await server.webhooks.waitFor({ since: 0 });
    await waitFor(async () => ((await server.webhooks.deliveries())[0]!.attempts.length === 1 ? true : undefined));
    const pending = (await server.webhooks.deliveries())[0]!;
    expect(Date.parse(pending.nextAttempt!) - Date.parse(pending.attempts[0]!.time)).toBeGreaterThanOrEqual(30_000);
    expect(Date.parse(pending.nextAttempt!) - Date.parse(pending.attempts[0]!.time)).toBeLessThan(60_000);
    await server.clock.advance('30s');
    const [done] = await server.webhooks.waitFor({ status: 'delivered' });
    expect(done).toMatchObject({ id: sent.id, eventId: first!.eventId, attempts: [{ status: 429 }, { status: 204 }] });
  });

  test('a redirect is a failure (not followed), and so is a receiver that does not answer in time', async () => {
    const r = await receiver(
      (n, res) => (n === 1 ? res.writeHead(302, { location: '/elsewhere' }).end() : undefined) /* never answers */,
    );
    const server = await serve(target(`${r.url}/hook`, { schedule: ['1m'], timeout: '200ms' }));
    await server.webhooks.trigger({ event: 'ping', to: 'app' });
    await waitFor(async () => ((await server.webhooks.deliveries())[0]!.attempts.length === 1 ? true : undefined));
    expect((await server.webhooks.deliveries())[0]!.attempts[0]).toMatchObject({
      status: 302,
      error: expect.stringMatching(/^redirect to \/elsewhere/),
    });
    await server.clock.advance('1m');
    const [failed] = await server.webhooks.waitFor({ status: 'failed' });
    expect(failed!.attempts[1]).toMatchObject({ status: null, error: 'timed out after 200 ms' });
    expect(failed!.error).toBe('gave up after 2 attempts');
  });
});

describe('seeded streams of their own', () => {
  test('adding a webhook (with chaos) never moves which requests fail', async () => {
    const r = await receiver((_n, res) => res.writeHead(200).end());
    const endpoint = (send: boolean) => ({
      method: 'POST',
      path: '/pay',
      failRate: 0.5,
      response: { body: { ok: true }, ...(send ? { send: [{ event: 'ping', to: 'app' }] } : {}) },
    });
    const statuses = async (withWebhook: boolean): Promise<number[]> => {
      const server = await startMockServer({
        config: {
          apiKey: KEY,
          seed: 42,
          ...target(`${r.url}/h`, { schedule: 'none' }, { duplicate: 0.5, badSignature: 0.5 }),
          endpoints: [endpoint(withWebhook)],
        },
        port: 0,
      });
      try {
        const out: number[] = [];
        for (let i = 0; i < 30; i++)
          out.push((await fetch(`${server.url}/mock/pay`, { method: 'POST', headers: { 'x-api-key': KEY } })).status);
        return out;
      } finally {
        await server.close();
      }
    };
    const without = await statuses(false);
    expect(new Set(without)).toEqual(new Set([200, 500]));
    expect(await statuses(true)).toEqual(without);
  });
});

describe('URLs from request data', () => {
  test('may reach loopback only: another host is refused (a note in the journal, nothing sent)', async () => {
    const r = await receiver((_n, res) => res.writeHead(200).end());
    const server = await serve({
      ...target(`${r.url}/h`, { schedule: 'none' }),
      endpoints: [
        {
          method: 'POST',
          path: '/subscribe',
          response: { status: 202, send: [{ event: 'ping', to: 'app', url: '${body.callback}' }] },
        },
      ],
    });
    const post = (callback: string) =>
      fetch(`${server.url}/mock/subscribe`, {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ callback }),
      });
    expect((await post('http://192.0.2.1/hook')).status).toBe(202);
    expect((await post(`${r.url}/from-request`)).status).toBe(202);
    const [refused, sent] = await server.requests();
    expect(refused!.notes).toEqual([
      'webhook ping: a URL taken from the request may reach only loopback addresses, not "http://192.0.2.1/hook"',
    ]);
    expect(sent!.notes).toEqual(['webhook ping → app: whd_1']);
    const [delivered] = await server.webhooks.waitFor({ status: 'delivered' });
    expect(delivered!.url).toBe(`${r.url}/from-request`);
    expect(await server.webhooks.deliveries()).toHaveLength(1);
  });
});

describe('stop', () => {
  const fds = (): number => readdirSync('/proc/self/fd').length;
  /** Active handles and timers by kind. */
  const resources = (): Record<string, number> => {
    const counts: Record<string, number> = {};
    for (const name of process.getActiveResourcesInfo()) counts[name] = (counts[name] ?? 0) + 1;
    return counts;
  };

  test('1,000 deliveries to a dead port leave file descriptors and timers at their baseline', async () => {
    const dead = await receiver(() => {});
    const deadUrl = dead.url;
    await new Promise((r) => dead.server.close(r)); // nothing listens there now
    const baseline = { fds: fds(), resources: resources() };
    const server = await startMockServer({
      config: { apiKey: KEY, ...target(`${deadUrl}/h`, { schedule: ['1h'], timeout: '1s' }) },
      port: 0,
    });
    for (let i = 0; i < 1000; i++) await server.webhooks.trigger({ event: 'ping', to: 'app' });
    await waitFor(
      async () =>
        (await server.webhooks.targets())[0]!.pending === 1000 &&
        (await server.webhooks.deliveries({ limit: 1000 })).every((d) => d.attempts.length === 1)
          ? true
          : undefined,
      30_000,
      200,
    );
    await server.close();
    expect(fds()).toBeLessThanOrEqual(baseline.fds);
    const after = resources();
    for (const [kind, count] of Object.entries(after))
      expect({ kind, count }).toEqual({ kind, count: Math.min(count, baseline.resources[kind] ?? 0) });
  }, 60_000);
});

describe('faults, hmac, replay and target changes', () => {
  test('an answer cut by a network fault sends nothing; the same answer without a fault does', async () => {
    const r = await receiver((_n, res) => res.writeHead(200).end());
    const server = await serve({
      ...target(`${r.url}/h`, { schedule: 'none' }),
      endpoints: [
        {
          method: 'POST',
          path: '/reset',
          faults: [{ kind: 'reset', rate: 1 }],
          response: { send: [{ event: 'ping', to: 'app' }] },
        },
        { method: 'POST', path: '/ok', response: { send: [{ event: 'ping', to: 'app' }] } },
      ],
    });
    await fetch(`${server.url}/mock/reset`, { method: 'POST', headers: { 'x-api-key': KEY } }).catch(() => undefined);
    expect((await fetch(`${server.url}/mock/ok`, { method: 'POST', headers: { 'x-api-key': KEY } })).status).toBe(200);
    const [delivered] = await server.webhooks.waitFor({ status: 'delivered' });
    expect(delivered!.endpoint).toBe('POST /ok');
    expect(await server.webhooks.deliveries()).toHaveLength(1);
  });

  test('hmac: the configured header, prefix, algorithm and encoding over the configured template', async () => {
    const { createHmac } = await import('node:crypto');
    const seen: Array<{ headers: import('node:http').IncomingHttpHeaders; body: string }> = [];
    const server2 = createServer((req, res) => {
      let body = '';
      req
        .on('data', (c) => (body += c))
        .on('end', () => {
          seen.push({ headers: req.headers, body });
          res.writeHead(200).end();
        });
    });
    await new Promise<void>((r) => server2.listen(0, '127.0.0.1', r));
    open.push({ close: () => new Promise((r) => server2.close(r)) });
    const url = `http://127.0.0.1:${(server2.address() as AddressInfo).port}/h`;
    const server = await serve({
      webhooks: {
        targets: {
          app: {
            url,
            sign: {
              scheme: 'hmac',
              secret: 'hmac-secret-1',
              header: 'X-Signature',
              algorithm: 'sha512',
              encoding: 'base64',
              template: '${timestamp}:${id}:${body}',
              prefix: 'v0=',
            },
            retry: { schedule: 'none' },
          },
        },
        events: { ping: { envelope: 'stripe', data: { a: 1 } } },
      },
    });
    const sent = await server.webhooks.trigger({ event: 'ping', to: 'app' });
    await waitFor(() => (seen.length === 1 ? true : undefined));
    const [{ headers, body }] = seen as [{ headers: import('node:http').IncomingHttpHeaders; body: string }];
    const timestamp = Math.floor(Date.now() / 1000);
    const candidates = [timestamp, timestamp - 1, timestamp - 2].map(
      (t) => `v0=${createHmac('sha512', 'hmac-secret-1').update(`${t}:${sent.eventId}:${body}`).digest('base64')}`,
    );
    expect(candidates).toContain(headers['x-signature']);
    expect(JSON.parse(body)).toMatchObject({
      id: sent.eventId,
      object: 'event',
      type: 'ping',
      data: { a: 1 },
      created: Date.parse('2026-01-01T00:00:00Z') / 1000,
    });
  });

  test('replay sends the same event again; PUT targets changes the URL and disables', async () => {
    const r = await receiver((_n, res) => res.writeHead(200).end());
    const server = await serve(target(`${r.url}/h`, { schedule: 'none' }));
    const first = await server.webhooks.trigger({ event: 'ping', to: 'app' });
    await server.webhooks.waitFor({ status: 'delivered' });
    const again = await server.webhooks.replay(first.id);
    expect(again).toMatchObject({ id: 'whd_2', eventId: first.eventId, body: first.body });
    await server.webhooks.waitFor({ status: 'delivered' }, { count: 2 });
    const put = await fetch(`${server.url}/__mockapi/webhooks/targets/app`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ disabled: true }),
    });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ name: 'app', disabled: true, delivered: 2 });
    await server.webhooks.trigger({ event: 'ping', to: 'app' });
    const [failed] = await server.webhooks.waitFor({ status: 'failed' });
    expect(failed!.error).toBe('target "app" is disabled');
    expect(r.hits).toHaveLength(2);
    const unknown = await fetch(`${server.url}/__mockapi/webhooks/targets/nope`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"disabled":false}',
    });
    expect(unknown.status).toBe(404);
  });
});

describe('chaos duplicate and reorder', () => {
  test('duplicate: a second delivery of the same event id; reorder: held back so the next event arrives first', async () => {
    const bodies: string[] = [];
    const r = await receiver((_n, res) => res.writeHead(200).end());
    r.server.removeAllListeners('request');
    r.server.on('request', (req, res) => {
      let body = '';
      req
        .on('data', (c) => (body += c))
        .on('end', () => {
          bodies.push(body);
          res.writeHead(200).end();
        });
    });
    const dup = await serve(target(`${r.url}/h`, { schedule: 'none' }, { duplicate: 1 }));
    const sent = await dup.webhooks.trigger({ event: 'ping', to: 'app', data: { n: 1 } });
    const both = await dup.webhooks.waitFor({ status: 'delivered' }, { count: 2 });
    expect(both.map((d) => [d.eventId, d.chaos])).toEqual([
      [sent.eventId, ['duplicate']],
      [sent.eventId, ['duplicate']],
    ]);
    expect(bodies).toEqual([sent.body, sent.body]);
    bodies.length = 0;
    const config = target(`${r.url}/h`, { schedule: 'none' });
    config.webhooks.targets.app = {
      ...config.webhooks.targets.app,
      chaos: { reorder: 1 },
    } as typeof config.webhooks.targets.app;
    (config.webhooks.targets as Record<string, unknown>).plain = {
      url: `${r.url}/h`,
      sign: { scheme: 'none' },
      retry: { schedule: 'none' },
    };
    const reorder = await serve(config);
    await reorder.webhooks.trigger({ event: 'ping', to: 'app', data: { n: 'held' } });
    await reorder.webhooks.trigger({ event: 'ping', to: 'plain', data: { n: 'next' } });
    await reorder.clock.advance('1s');
    await reorder.webhooks.waitFor({ status: 'delivered' }, { count: 2 });
    expect(bodies.map((b) => JSON.parse(b).n)).toEqual(['next', 'held']);
  });
});
