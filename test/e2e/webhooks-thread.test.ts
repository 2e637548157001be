// The built server (dist/) signs and sends deliveries from a thread of its own, so that receivers'
// HTTP work never runs in the thread that answers requests: the thread starts with the first
// delivery, its signatures verify, and at stop it ends with every socket (1,000 deliveries to a
// dead port leave threads, file descriptors and handles at their baseline).
import { afterEach, describe, expect, test } from 'vitest';
import { readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verify as verifyGithub } from '@octokit/webhooks-methods';
import type * as Api from '../../src/index.js';
import { waitFor } from '../helpers/cli.js';

// The build, as users run it: from TypeScript sources there is no compiled thread file to start.
const { startMockServer } = (await import(new URL('../../dist/index.js', import.meta.url).href)) as typeof Api;
const KEY = 'mk_webhooksThread00000000000000001';
const SECRET = 'thread-secret';
const threads = (): number => readdirSync('/proc/self/task').length;
const fds = (): number => readdirSync('/proc/self/fd').length;
const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
});

const config = (url: string, retry: unknown = { schedule: 'none' }) => ({
  apiKey: KEY,
  webhooks: {
    targets: { app: { url, sign: { scheme: 'github', secret: SECRET }, retry } },
    events: { ping: { envelope: 'github', data: { zen: 'hi' } } },
  },
  endpoints: [{ method: 'POST', path: '/ping', response: { status: 202, send: [{ event: 'ping', to: 'app' }] } }],
});

describe.runIf(process.platform === 'linux')('the delivery thread', () => {
  test('starts with the first delivery, sends what the receiver verifies, and ends at stop', async () => {
    const got: Array<{ body: string; signature: string }> = [];
    const receiver: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        got.push({ body, signature: String(req.headers['x-hub-signature-256']) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    open.push({ close: () => new Promise((r) => receiver.close(r)) });
    const before = threads();
    const server = await startMockServer({
      config: config(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/h`),
      port: 0,
    });
    const idle = threads();
    const res = await fetch(`${server.url}/mock/ping`, { method: 'POST', headers: { 'x-api-key': KEY } });
    expect(res.status).toBe(202);
    const [delivered] = await server.webhooks.waitFor({ status: 'delivered' });
    expect(threads()).toBeGreaterThan(idle);
    expect(got).toHaveLength(1);
    expect(await verifyGithub(SECRET, got[0]!.body, got[0]!.signature)).toBe(true);
    expect(delivered!.headers['x-hub-signature-256']).toBe(got[0]!.signature);
    await server.close();
    await waitFor(async () => (threads() <= before ? true : undefined), 5000, 20);
  });

  test('1,000 deliveries to a dead port leave threads, file descriptors and handles at their baseline', async () => {
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}/h`;
    await new Promise((r) => dead.close(r));
    const baseline = { threads: threads(), fds: fds(), resources: process.getActiveResourcesInfo().length };
    const server = await startMockServer({ config: config(deadUrl, { schedule: ['1h'], timeout: '1s' }), port: 0 });
    for (let i = 0; i < 1000; i++) await server.webhooks.trigger({ event: 'ping', to: 'app' });
    await waitFor(
      async () =>
        (await server.webhooks.deliveries({ limit: 1000 })).every((d) => d.attempts.length === 1) ? true : undefined,
      30_000,
      100,
    );
    expect((await server.webhooks.deliveries({ limit: 1 }))[0]!.attempts[0]).toMatchObject({
      status: null,
      error: 'ECONNREFUSED',
    });
    await server.close();
    await waitFor(async () => (threads() <= baseline.threads ? true : undefined), 5000, 20);
    expect(fds()).toBeLessThanOrEqual(baseline.fds);
    expect(process.getActiveResourcesInfo().length).toBeLessThanOrEqual(baseline.resources);
  }, 60_000);
});
