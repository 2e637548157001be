/// <reference lib="dom" />
// The inspector's Webhooks view in headless Chromium against the real CLI: a delivery appears live
// (the `webhook` event), its attempts show as they happen, Replay sends it again (a new delivery
// the receiver gets, same event id), the request that caused it links to it, and the page's HTML
// never holds the target's secret.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page, Route } from 'playwright-core';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { startServe, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_inspectorWebhooks0000000000001';
const SECRET = 'whsec_inspectorPageSecret7Qx9';
const dir = useTempDir('mockapi-inspector-webhooks-');
let receiver: Server;
const received: Array<{ body: string; signature: string }> = [];
/** While set, the receiver holds its answers until it resolves. */
let gate: Promise<void> | undefined;
let server: ServeProcess;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  // Answers 500 to the first attempt, then 200.
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on(
      'end',
      () =>
        void (gate ?? Promise.resolve()).then(() => {
          received.push({ body, signature: String(req.headers['stripe-signature']) });
          res.writeHead(received.length === 1 ? 500 : 200).end();
        }),
    );
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  await writeConfig(
    dir.path,
    `project: hooks
apiKey: ${KEY}
webhooks:
  targets:
    app:
      url: http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook
      sign: { scheme: stripe, secret: ${SECRET} }
      retry: { schedule: [200ms], timeout: 5s }
  events:
    charge.succeeded:
      envelope: stripe
      data: { object: { object: charge, status: succeeded } }
endpoints:
  - method: POST
    path: /charges
    delay: { min: 1ms, max: 2ms }   # a latency shape notes its draw: the webhook's note is not the only one
    response:
      status: 201
      body: { id: ch_1, object: charge }
      send: [{ event: charge.succeeded, to: app, data: { object: { id: "\${response.body.id}" } } }]
`,
  );
  server = await startServe(['-c', join(dir.path, 'mockapi.yaml'), '--no-state', '--log', 'off']);
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1200, height: 720 } })).newPage();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => receiver?.close(r));
});

const cells = (selector: string): Promise<string[][]> =>
  page.$$eval(`${selector} tbody tr`, (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent ?? '')));

describe('the Webhooks view', () => {
  it('shows a delivery live with its attempts, replays it, links it from its request, and never shows the secret', async () => {
    await page.goto(`${server.url}/__mockapi/`);
    await page.waitForSelector('#live.on');
    await page.keyboard.press('4');
    expect(await page.isVisible('#view-webhooks')).toBe(true);
    expect(await page.isVisible('#wh-empty')).toBe(true);

    const res = await fetch(`${server.mock}/charges`, { method: 'POST', headers: { 'x-api-key': KEY } });
    expect(res.status).toBe(201);
    // Notes stay a list from the journal entry through the admin API: one note each, never joined.
    const journal = (await (await fetch(`${server.url}/__mockapi/requests?limit=1`)).json()) as {
      requests: Array<{ notes: string[] }>;
    };
    expect(journal.requests[0]!.notes).toEqual([
      expect.stringMatching(/^delay: \d+ ms$/),
      'webhook charge.succeeded → app: whd_1',
    ]);
    await page.click('#wh-list li[data-id="whd_1"]');
    // The retry after the 500 arrives live: the attempts table grows to two rows and the status follows.
    await page.waitForFunction(() => document.querySelector('#wh-status')?.textContent === 'delivered');
    expect((await cells('#wh-attempts')).map((row) => row[1])).toEqual(['500', '200']);
    expect(await page.textContent('#wh-list li[data-id="whd_1"]')).toContain('charge.succeeded → app');
    expect(received).toHaveLength(2);
    const headers = Object.fromEntries(await cells('#wh-headers'));
    expect(headers['stripe-signature']).toBe(received[1]!.signature);
    const event = new Stripe('sk_test_x').webhooks.constructEvent(received[1]!.body, received[1]!.signature, SECRET);
    expect(JSON.parse((await page.textContent('#wh-body')) ?? '')).toEqual(JSON.parse(received[1]!.body));
    await page.waitForFunction(
      () => document.querySelector('#wh-targets')?.textContent?.includes('1 delivered') === true,
    );
    expect(await page.textContent('#wh-targets')).toMatch(
      /^app → http:\/\/127\.0\.0\.1:\d+\/hook · stripe · secret sha256:[0-9a-f]{12} · 0 pending, 1 delivered, 0 failed$/,
    );

    // Replay: a new delivery, the same event id, which the receiver gets (the admin write is JSON, same origin).
    await page.click('#wh-replay');
    await page.waitForSelector('#wh-list li[data-id="whd_2"][aria-selected="true"]');
    await page.waitForFunction(() => document.querySelector('#wh-status')?.textContent === 'delivered');
    expect(await cells('#wh-attempts')).toEqual([[expect.any(String), '200', expect.any(String), '']]);
    expect(received).toHaveLength(3);
    expect(JSON.parse(received[2]!.body).id).toBe(event.id);
    expect(await page.textContent('#toast')).toBe('Replayed whd_1 as whd_2');
    const log = (await (await fetch(`${server.url}/__mockapi/webhooks/deliveries`)).json()) as {
      deliveries: Array<{ id: string; endpoint: string | null }>;
    };
    expect(log.deliveries.map((d) => [d.id, d.endpoint])).toEqual([
      ['whd_1', 'POST /charges'],
      ['whd_2', null],
    ]);

    // The request that caused it links to its delivery.
    await page.keyboard.press('1');
    await page.click('#list li[data-id]');
    await page.click('#deliveries button[data-delivery="whd_1"]');
    expect(await page.isVisible('#view-webhooks')).toBe(true);
    expect(await page.getAttribute('#wh-list li[data-id="whd_1"]', 'aria-selected')).toBe('true');
    expect(await page.textContent('#wh-detail h2')).toBe('charge.succeeded → app delivered');

    // The secret (and the key bytes inside it) never reach the page.
    const html = await page.content();
    expect(html).not.toContain(SECRET);
    expect(html).not.toContain(SECRET.slice('whsec_'.length));
  });

  it('keeps the furthest state of a delivery when an answer read earlier reaches the page after the event stream', async () => {
    // The receiver holds its answer, so the replay's answer and a read of the target counts are taken
    // while the copy is pending; the page gets them only after the event stream has said it was delivered.
    let release!: () => void;
    gate = new Promise<void>((resolve) => (release = resolve));
    let countsRead!: () => void;
    const staleCounts = new Promise<void>((resolve) => (countsRead = resolve));
    const delivered = '#wh-list li[data-id="whd_3"][title$=": delivered"]';
    const replayed = '#wh-list li[data-id="whd_3"][aria-selected="true"]';
    const hold = async (route: Route, until: string[], read?: () => void): Promise<void> => {
      const response = await route.fetch();
      read?.();
      for (const selector of until) await page.waitForSelector(selector, { state: 'attached' });
      await route.fulfill({ response });
    };
    await page.route('**/__mockapi/webhooks/deliveries/*/replay', (route) => hold(route, [delivered]));
    await page.route('**/__mockapi/webhooks', (route) => hold(route, [delivered, replayed], countsRead));
    try {
      await page.click('#wh-replay');
      await staleCounts;
      expect(received).toHaveLength(3);
      gate = undefined;
      release();
      await page.waitForSelector(replayed, { state: 'attached' });
      expect(await page.textContent('#wh-status')).toBe('delivered');
      expect(await page.textContent('#wh-list li[data-id="whd_3"] .method')).toBe('delivered');
      await page.waitForFunction(
        () => document.querySelector('#wh-targets')?.textContent?.endsWith('0 pending, 3 delivered, 0 failed') === true,
        undefined,
        { timeout: 10_000 },
      );
    } finally {
      await page.unrouteAll({ behavior: 'wait' });
    }
    expect(received).toHaveLength(4);
  });
});

describe('Replay is an admin write like the others', () => {
  const post = (path: string, headers: Record<string, string>): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = request(`${server.url}${path}`, { method: 'POST', headers }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end('{}');
    });

  it('a cross-site form post (not JSON) and a rebound Host are refused, and nothing is sent', async () => {
    const before = received.length;
    expect(await post('/__mockapi/webhooks/deliveries/whd_1/replay', { 'content-type': 'text/plain' })).toBe(415);
    expect(
      await post('/__mockapi/webhooks/deliveries/whd_1/replay', {
        'content-type': 'application/json',
        host: 'attacker.example',
      }),
    ).toBe(403);
    const log = (await (await fetch(`${server.url}/__mockapi/webhooks/deliveries?since=3`)).json()) as {
      deliveries: unknown[];
    };
    expect(log.deliveries).toEqual([]);
    expect(received).toHaveLength(before);
  });
});
