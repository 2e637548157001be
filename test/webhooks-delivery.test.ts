// Webhook delivery in one process (startMockServer): Retry-After, redirects and timeouts, the
// seeded streams of their own (a webhook never moves which requests fail), loopback-only URLs
// from request data, and every timer and socket released after 1,000 deliveries to a dead port.
import { afterEach, describe, expect, test } from 'vitest';
import { readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startMockServer, type MockServer } from '../src/index.js';
import { waitFor } from './helpers/cli.js';

const KEY = 'mk_webhooksDelivery0000000000000001';
const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
});

async function receiver(answer: (n: number, res: import('node:http').ServerResponse) => void): Promise<{ url: string; hits: number[]; server: Server }> {
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
  webhooks: { targets: { app: { url, sign: { scheme: 'github', secret: 'delivery-secret' }, retry, ...(chaos === undefined ? {} : { chaos }) } }, events: { ping: { envelope: 'github', data: { zen: 'hi' } } } },
});

describe('outcomes of an attempt', () => {
  test('429 with Retry-After: the next attempt waits what the receiver asked, not the schedule', async () => {
    const r = await receiver((n, res) => (n === 1 ? res.writeHead(429, { 'retry-after': '30' }).end() : res.writeHead(204).end()));
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
    const r = await receiver((n, res) => (n === 1 ? res.writeHead(302, { location: '/elsewhere' }).end() : undefined /* never answers */));
    const server = await serve(target(`${r.url}/hook`, { schedule: ['1m'], timeout: '200ms' }));
    await server.webhooks.trigger({ event: 'ping', to: 'app' });
    await waitFor(async () => ((await server.webhooks.deliveries())[0]!.attempts.length === 1 ? true : undefined));
    expect((await server.webhooks.deliveries())[0]!.attempts[0]).toMatchObject({ status: 302, error: expect.stringMatching(/^redirect to \/elsewhere/) });
    await server.clock.advance('1m');
    const [failed] = await server.webhooks.waitFor({ status: 'failed' });
    expect(failed!.attempts[1]).toMatchObject({ status: null, error: 'timed out after 200 ms' });
    expect(failed!.error).toBe('gave up after 2 attempts');
  });
});

describe('seeded streams of their own', () => {
  test('adding a webhook (with chaos) never moves which requests fail', async () => {
    const r = await receiver((_n, res) => res.writeHead(200).end());
    const endpoint = (send: boolean) => ({ method: 'POST', path: '/pay', failRate: 0.5, response: { body: { ok: true }, ...(send ? { send: [{ event: 'ping', to: 'app' }] } : {}) } });
    const statuses = async (withWebhook: boolean): Promise<number[]> => {
      const server = await startMockServer({ config: { apiKey: KEY, seed: 42, ...target(`${r.url}/h`, { schedule: 'none' }, { duplicate: 0.5, badSignature: 0.5 }), endpoints: [endpoint(withWebhook)] }, port: 0 });
      try {
        const out: number[] = [];
        for (let i = 0; i < 30; i++) out.push((await fetch(`${server.url}/mock/pay`, { method: 'POST', headers: { 'x-api-key': KEY } })).status);
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
      endpoints: [{ method: 'POST', path: '/subscribe', response: { status: 202, send: [{ event: 'ping', to: 'app', url: '${body.callback}' }] } }],
    });
    const post = (callback: string) => fetch(`${server.url}/mock/subscribe`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify({ callback }) });
    expect((await post('http://192.0.2.1/hook')).status).toBe(202);
    expect((await post(`${r.url}/from-request`)).status).toBe(202);
    const [refused, sent] = await server.requests();
    expect(refused!.notes).toEqual(['webhook ping: a URL taken from the request may reach only loopback addresses, not "http://192.0.2.1/hook"']);
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
    const server = await startMockServer({ config: { apiKey: KEY, ...target(`${deadUrl}/h`, { schedule: ['1h'], timeout: '1s' }) }, port: 0 });
    for (let i = 0; i < 1000; i++) await server.webhooks.trigger({ event: 'ping', to: 'app' });
    await waitFor(async () => ((await server.webhooks.targets())[0]!.pending === 1000 && (await server.webhooks.deliveries({ limit: 1000 })).every((d) => d.attempts.length === 1) ? true : undefined), 30_000, 200);
    await server.close();
    expect(fds()).toBeLessThanOrEqual(baseline.fds);
    const after = resources();
    for (const [kind, count] of Object.entries(after)) expect({ kind, count }).toEqual({ kind, count: Math.min(count, baseline.resources[kind] ?? 0) });
  }, 60_000);
});
