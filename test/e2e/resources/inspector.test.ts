/// <reference lib="dom" />
// The inspector's Resources view in headless Chromium against the real CLI: each collection with its
// count, its objects newest first, an object's history (created, action, lifecycle move on the
// virtual clock) with the request that made each change, which links to that request.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../helpers/browser.js';
import { startServe, stopAll, tempDir, writeConfig, type ServeProcess } from '../../helpers/cli.js';

const KEY = 'sk_test_resourcesInspector000000000001';
let server: ServeProcess;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  const dir = await tempDir();
  const file = await writeConfig(
    dir,
    `apiKey: ${KEY}
seed: 3
server: { basePath: /v1 }
auth: { accept: [bearer] }
resources:
  payment_intents:
    style: stripe
    path: /payment_intents
    fields: { object: payment_intent, status: requires_confirmation, amount: 0 }
    actions:
      confirm: { set: { status: processing } }
    lifecycle:
      - { from: processing, after: 2s, to: succeeded }
  customers:
    style: stripe
    path: /customers
    seed:
      - { id: cus_seeded }
`,
  );
  server = await startServe(['-c', file, '--clock', '2026-01-01T00:00:00Z', '--no-state', '--log', 'off'], {
    cwd: dir,
  });
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1200, height: 720 } })).newPage();
});

afterAll(async () => {
  await browser?.close();
  await stopAll();
});

const post = (path: string, body = ''): Promise<Response> =>
  fetch(`${server.url}/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
const cells = (selector: string): Promise<string[][]> =>
  page.$$eval(`${selector} tbody tr`, (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent ?? '')));

describe('the Resources view', () => {
  it("shows each collection, its objects and each object's history with the request behind each change", async () => {
    const made = (await (await post('/payment_intents', 'amount=2000')).json()) as { id: string };
    await post('/payment_intents', 'amount=10');
    expect((await post(`/payment_intents/${made.id}/confirm`)).status).toBe(200);
    await fetch(`${server.url}/__mockapi/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"advance":"2s"}',
    });

    await page.goto(`${server.url}/__mockapi/`);
    await page.waitForSelector('#live.on');
    await page.keyboard.press('5');
    expect(await page.isVisible('#view-resources')).toBe(true);
    await page.waitForFunction(() => document.querySelectorAll('#res-list li').length === 2);
    expect(await page.$$eval('#res-collection option', (options) => options.map((o) => o.textContent))).toEqual([
      'payment_intents (2) — stripe /payment_intents',
      'customers (1) — stripe /customers',
    ]);
    const rows = await page.$$eval('#res-list li', (lis) => lis.map((li) => (li as HTMLElement).dataset.id));
    expect(rows[1]).toBe(made.id); // newest first

    await page.click(`#res-list li[data-id="${made.id}"]`);
    await page.waitForSelector('#res-history');
    expect(JSON.parse((await page.textContent('#res-object')) ?? '')).toEqual({
      id: made.id,
      object: 'payment_intent',
      status: 'succeeded',
      amount: 2000,
    });
    const history = await cells('#res-history');
    expect(history.map((row) => [row[1], row[2], row[3]])).toEqual([
      ['created', '', 'request #1'],
      ['action', 'confirm', 'request #3'],
      ['lifecycle', 'processing → succeeded', 'the clock'],
    ]);

    // The request behind a change opens in the Requests view.
    await page.click('#res-history a[data-request="3"]');
    expect(await page.isVisible('#view-requests')).toBe(true);
    expect(await page.getAttribute('#list li[data-id="3"]', 'aria-selected')).toBe('true');

    // Another collection: the seed, by the seed.
    await page.keyboard.press('5');
    await page.selectOption('#res-collection', 'customers');
    await page.waitForSelector('#res-list li[data-id="cus_seeded"]');
    await page.click('#res-list li[data-id="cus_seeded"]');
    await page.waitForSelector('#res-history');
    expect((await cells('#res-history')).map((row) => [row[1], row[3]])).toEqual([['seeded', 'the seed']]);
  });
});
