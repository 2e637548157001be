// Hostile webhook receivers and request-made URLs, through the real CLI: a receiver that asks for
// an absurd Retry-After cannot stop the server or break the delivery log, and a delivery can never
// call a mockapi's admin API (its own or another's), whatever its URL.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { runCli, startServe, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin } from '../helpers/control.js';

const KEY = 'mk_hostileWebhooks00000000000000001';
const dir = useTempDir('mockapi-hostile-webhooks-', { each: true });
let receiver: { url: string; server: Server; hits: string[] };

beforeAll(async () => {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits.push(req.url ?? '');
      res
        .writeHead(503, { 'retry-after': req.url === '/date' ? 'Sat, 13 Sep 275760 00:00:00 GMT' : '9999999999999' })
        .end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  receiver = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, hits };
});
afterAll(() => new Promise<void>((r) => receiver.server.close(() => r())));

function config(targetUrl: string): string {
  return `apiKey: ${KEY}
webhooks:
  targets:
    app:
      url: ${targetUrl}
      sign: { scheme: github, secret: hostile-secret-0001 }
      retry: { schedule: [1m, 1m] }
  events:
    ping: { envelope: github, data: { zen: hi } }
endpoints:
  - method: POST
    path: /pay
    response:
      body: { ok: true }
      send: [{ event: ping, to: app, url: "\${body.callback}" }]
`;
}

async function start(targetUrl: string): Promise<ServeProcess> {
  const file = await writeConfig(dir.path, config(targetUrl));
  return startServe(['--no-watch', '-c', file]);
}

/** Reads `GET /__mockapi/events` (what the inspector keeps open) until the test ends. */
async function openEvents(url: string): Promise<() => void> {
  const controller = new AbortController();
  const res = await request(`${url}/__mockapi/events`, { signal: controller.signal });
  res.body.on('data', () => {}).on('error', () => {});
  return () => controller.abort();
}

describe('a receiver asking for an absurd Retry-After', () => {
  for (const path of ['/huge', '/date']) {
    test(`503 with Retry-After past what a Date holds (${path}): the server, the log and the CLI carry on`, async () => {
      const s = await start(`${receiver.url}${path}`);
      const close = await openEvents(s.url);
      try {
        expect((await admin(s.url, 'POST', 'webhooks/trigger', { event: 'ping', to: 'app' })).status).toBe(201);
        const delivery = await waitFor(async () => {
          const d = (await admin(s.url, 'GET', 'webhooks/deliveries')).body.deliveries?.[0];
          return d?.attempts.length === 1 && d.nextAttempt !== null ? d : undefined;
        });
        const wait = Date.parse(delivery.nextAttempt) - Date.parse(delivery.attempts[0].time);
        expect(wait).toBeGreaterThan(0);
        expect(wait).toBeLessThanOrEqual(24 * 60 * 60 * 1000 + 10_000); // a receiver may ask for a day at most (counted from the answer)
        const list = await runCli(['webhooks', 'list', '-c', `${dir.path}/mockapi.yaml`]);
        expect(list.stderr).toBe('');
        expect(list.code).toBe(0);
        expect(list.stdout).toMatch(/^whd_1 ping .* pending/);
        expect((await request(`${s.url}/__mockapi/health`)).statusCode).toBe(200);
      } finally {
        close();
      }
      expect(s.child.exitCode).toBeNull();
      expect(await s.stop()).toBe(0);
      expect(s.stderr()).not.toMatch(/RangeError|Invalid time value/);
    });
  }
});

describe('a delivery never reaches an admin API', () => {
  test('a URL taken from the request that names /__mockapi/ is refused with a note; nothing rotates, resets or is added', async () => {
    const s = await start(`${receiver.url}/hook`);
    for (const path of ['/__mockapi/rotate-key', '//__mockapi/stubs', '/%5F_mockapi/usage', '/__MOCKAPI/reset']) {
      const res = await request(`${s.mock}/pay`, {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ callback: `${s.url}${path}` }),
      });
      expect(res.statusCode).toBe(200);
      await res.body.text();
    }
    const journal = (await admin(s.url, 'GET', 'requests')).body;
    const notes = JSON.stringify(journal);
    expect(notes.match(/a delivery never goes to a mockapi admin API/g)?.length).toBe(4);
    expect((await admin(s.url, 'GET', 'webhooks/deliveries')).body.deliveries).toEqual([]);
    expect((await admin(s.url, 'GET', 'stubs')).body.stubs).toEqual([]);
    expect((await request(`${s.mock}/pay`, { method: 'POST', headers: { 'x-api-key': KEY } })).statusCode).toBe(200);
  });

  test('a target pointed at an admin API (its own, by the admin call itself) is refused there: 403, the key unchanged', async () => {
    const s = await start(`${receiver.url}/hook`);
    expect((await admin(s.url, 'PUT', 'webhooks/targets/app', { url: `${s.url}/__mockapi/rotate-key` })).status).toBe(
      200,
    );
    await admin(s.url, 'POST', 'webhooks/trigger', { event: 'ping', to: 'app' });
    const delivery = await waitFor(async () =>
      (await admin(s.url, 'GET', 'webhooks/deliveries')).body.deliveries.find(
        (d: { attempts: unknown[] }) => d.attempts.length > 0,
      ),
    );
    expect(delivery.attempts[0].status).toBe(403);
    // The key was not rotated: the old key still passes.
    const res = await request(`${s.mock}/pay`, { method: 'POST', headers: { 'x-api-key': KEY } });
    expect(res.statusCode).toBe(200);
    expect((await admin(s.url, 'GET', 'stubs')).body.stubs).toEqual([]);
  });
});
