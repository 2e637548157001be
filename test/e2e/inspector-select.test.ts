/// <reference lib="dom" />
// Selecting a request in the inspector with the mouse, at common laptop and small window sizes: the
// row clicked is the request shown, the first click after typing in the filter counts, and the
// detail never shows a request the filter hides.
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { startServe, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_inspectorSelect0000000000000001';
const CONFIG = `project: select-test
apiKey: ${KEY}
endpoints:
  - method: GET
    path: /items/:id
    response:
      body: { ok: true }
`;
/** More rows than fit in the list at either size, so the list scrolls. */
const REQUESTS = 40;

const dir = useTempDir('mockapi-inspector-select-');
let server: ServeProcess;
let browser: Browser;
/** Journal ids by item number: item n is GET /mock/items/n. */
const idOf = new Map<number, number>();

beforeAll(async () => {
  await writeConfig(dir.path, CONFIG);
  browser = await launchChromium();
});

/** A fresh server (for each window size) with requests for items 1 to REQUESTS in its journal. */
async function startSeeded(): Promise<void> {
  server = await startServe(['-c', join(dir.path, 'mockapi.yaml'), '--no-state', '--log', 'off']);
  for (let n = 1; n <= REQUESTS; n++)
    expect((await fetch(`${server.mock}/items/${n}`, { headers: { 'x-api-key': KEY } })).status).toBe(200);
  const { requests } = (await (await fetch(`${server.url}/__mockapi/requests?limit=${REQUESTS}`)).json()) as {
    requests: { id: number; path: string }[];
  };
  idOf.clear();
  for (const r of requests) idOf.set(Number(r.path.split('/').pop()), r.id);
}

afterAll(async () => {
  await browser?.close();
});

/** The `#id` the detail shows, or undefined when it shows no request. */
async function shownId(page: Page): Promise<number | undefined> {
  const text = await page.evaluate(() => document.querySelector('#detail .meta span')?.textContent ?? '');
  return text.startsWith('#') ? Number(text.slice(1)) : undefined;
}

describe.each([
  [1280, 720],
  [800, 600],
])('selecting requests at %i×%i', (width, height) => {
  let page: Page;

  beforeAll(async () => {
    await startSeeded();
    const context = await browser.newContext({ viewport: { width, height } });
    page = await context.newPage();
    await page.goto(`${server.url}/__mockapi/`);
    await page.waitForFunction(
      (n) =>
        document.querySelectorAll('#list li').length === n && document.getElementById('live')?.textContent === 'live',
      REQUESTS,
    );
  });

  afterAll(async () => {
    await page.context().close();
  });

  it('the first click on the 3rd row opens that request', async () => {
    expect(await shownId(page)).toBeUndefined();
    const third = await page.$eval('#list li:nth-child(3)', (el) => Number((el as HTMLElement).dataset.id));
    expect(third).toBe(idOf.get(REQUESTS - 2));
    await page.click('#list li:nth-child(3)');
    expect(await shownId(page)).toBe(third);
    expect(await page.getAttribute('#list li:nth-child(3)', 'aria-selected')).toBe('true');
    expect(await page.$$eval('#list li[aria-selected=true]', (els) => els.length)).toBe(1);
  });

  it('the first click on a row the list has to scroll to opens it', async () => {
    await page.reload();
    await page.waitForFunction((n) => document.querySelectorAll('#list li').length === n, REQUESTS);
    expect(await shownId(page)).toBeUndefined();
    await page.click('#list li:nth-child(30)');
    expect(await shownId(page)).toBe(idOf.get(REQUESTS - 29));
    expect(await page.$$eval('#list li[aria-selected=true]', (els) => els.map((el) => el.id))).toEqual([
      `req-${idOf.get(REQUESTS - 29)}`,
    ]);
  });

  it('after typing in the filter, the first click on a visible row opens it', async () => {
    await page.click('#f-text');
    await page.keyboard.type('/items/1');
    // /items/1 and /items/10 … /items/19
    await page.waitForFunction(() => document.querySelectorAll('#list li').length === 11);
    const second = await page.$eval('#list li:nth-child(2)', (el) => Number((el as HTMLElement).dataset.id));
    expect(second).toBe(idOf.get(18));
    await page.click('#list li:nth-child(2)');
    expect(await shownId(page)).toBe(second);
    expect(await page.getAttribute('#list li:nth-child(2)', 'aria-selected')).toBe('true');
  });

  it('a selected request the filter hides leaves the detail', async () => {
    expect(await shownId(page)).toBe(idOf.get(18));
    await page.fill('#f-text', '/items/2');
    await page.waitForFunction(() => document.querySelectorAll('#list li').length === 11);
    expect(await shownId(page)).toBeUndefined();
    expect(await page.$$eval('#list li[aria-selected=true]', (els) => els.length)).toBe(0);
    // Showing it again brings nothing back by itself: the detail waits for the next choice.
    await page.fill('#f-text', '');
    await page.waitForFunction((n) => document.querySelectorAll('#list li').length === n, REQUESTS);
    expect(await shownId(page)).toBeUndefined();
    await page.click('#list li:nth-child(5)');
    expect(await shownId(page)).toBe(idOf.get(REQUESTS - 4));
  });

  it('a press on a row opens that request even when a live request moves the rows before the release', async () => {
    await page.fill('#f-text', '');
    await page.click('#list li:nth-child(1)');
    const before = await page.$$eval('#list li', (els) => els.length);
    await page.hover('#list li:nth-child(3)');
    const pressed = await page.$eval('#list li:nth-child(3)', (el) => Number((el as HTMLElement).dataset.id));
    await page.mouse.down();
    expect((await fetch(`${server.mock}/items/999`, { headers: { 'x-api-key': KEY } })).status).toBe(200);
    await page.waitForFunction((n) => document.querySelectorAll('#list li').length === n, before + 1);
    await page.mouse.up();
    expect(await shownId(page)).toBe(pressed);
    expect(await page.$$eval('#list li[aria-selected=true]', (els) => els.map((el) => el.id))).toEqual([
      `req-${pressed}`,
    ]);
  });

  it('a click without a press (a screen reader activating a row) opens that request too', async () => {
    const id = await page.$eval('#list li:nth-child(7)', (el) => Number((el as HTMLElement).dataset.id));
    expect(await shownId(page)).not.toBe(id);
    await page.$eval('#list li:nth-child(7)', (el) => (el as HTMLElement).click());
    expect(await shownId(page)).toBe(id);
  });

  it('Clear empties the detail with the list', async () => {
    expect(await shownId(page)).toBeDefined();
    await page.click('#clear-requests');
    await page.waitForFunction(() => document.querySelectorAll('#list li').length === 0);
    expect(await shownId(page)).toBeUndefined();
  });
});
