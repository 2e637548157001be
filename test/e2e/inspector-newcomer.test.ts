/// <reference lib="dom" />
// What a first-time user of the inspector needs to see: the answer each request got, counts (not
// shortcuts) in the tab badges, one line per request with its duration, a status typed in the
// filter, the empty state where the eye is, gauges that fit a narrow window, and an Endpoints
// view and scenario states that say what the config does.
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { startServe, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_inspectorNewcomer000000000000001';
const CONFIG = `project: newcomer
apiKey: ${KEY}
limits:
  rateLimit: { requests: 3, window: 1m }
  monthlyQuota: 1000000
scenarios:
  checkout: { initial: open }
endpoints:
  - method: GET
    path: /users/:id
    responses:
      - name: missing
        when: { params.id: "404" }
        status: 404
        body: { error: not_found }
      - name: closed
        when: { state.checkout: closed }
        status: 503
      - name: found
        body: { id: "\${params.id}", name: Ada, note: "429 in a body" }
  - method: POST
    path: /orders
    pick:
      - { weight: 3, status: 201, body: { ok: true }, setState: { checkout: paid } }
      - { weight: 1, status: 402, body: { error: declined } }
  - method: GET
    path: /retry
    sequence:
      - { times: 2, status: 503 }
      - { status: 200 }
  - method: GET
    path: /health-check
  - method: GET
    path: /spare
`;

const dir = useTempDir('mockapi-inspector-newcomer-');
let server: ServeProcess;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const shots = process.env.INSPECTOR_SHOTS;

async function shot(name: string): Promise<void> {
  if (shots !== undefined) await page.screenshot({ path: join(shots, `${name}.png`), animations: 'disabled' });
}

function mock(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${server.mock}${path}`, {
    ...init,
    headers: { 'x-api-key': KEY, ...(init.headers as Record<string, string> | undefined) },
  });
}

beforeAll(async () => {
  await writeConfig(dir.path, CONFIG);
  server = await startServe(['-c', join(dir.path, 'mockapi.yaml'), '--no-state', '--log', 'off']);
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  page = await context.newPage();
});

afterAll(async () => {
  await browser?.close();
});

describe('the inspector for a newcomer', () => {
  it('shows the empty state at the top of the list pane', async () => {
    await page.goto(`${server.url}/__mockapi/`);
    await page.waitForFunction(
      () =>
        document.getElementById('example')?.textContent?.includes('/mock/users/42') === true &&
        document.getElementById('live')?.textContent === 'live',
    );
    const empty = await page.$eval('#empty', (el) => el.getBoundingClientRect().top);
    const filters = await page.$eval('#count', (el) => el.getBoundingClientRect().bottom);
    expect(empty - filters).toBeLessThan(20);
    await shot('empty');
  });

  it('badges count requests and endpoints; shortcuts are in the tooltip', async () => {
    await page.waitForFunction(() => document.getElementById('badge-endpoints')?.textContent === '5');
    expect(await page.textContent('#tab-endpoints')).toBe('Endpoints 5');
    expect(await page.getAttribute('#tab-endpoints', 'title')).toBe('Endpoints — shortcut: 2');
    expect(await page.textContent('#badge-requests')).toBe('0');
    expect(await page.textContent('#tab-project')).toBe('Project');
    expect((await mock('/users/7')).status).toBe(200);
    expect((await mock('/users/404')).status).toBe(404);
    await page.waitForFunction(() => document.getElementById('badge-requests')?.textContent === '2');
  });

  it('shows the answer each request got: status, headers and body', async () => {
    await page.click('#list li:nth-child(2)'); // GET /users/7
    await page.waitForSelector('#answer-body');
    expect(await page.textContent('#answer-body')).toBe(
      JSON.stringify({ id: '7', name: 'Ada', note: '429 in a body' }, null, 2),
    );
    const headers = await page.$$eval('#answer-headers tr', (rows) =>
      rows.map((r) => [...r.children].map((c) => c.textContent)),
    );
    expect(headers).toContainEqual(['content-type', 'application/json; charset=utf-8']);
    expect(headers).toContainEqual(['ratelimit-remaining', '2']);
    expect(await page.textContent('#detail h2')).toContain('→ 200');
    await shot('detail');
  });

  it('lists each request on one line, with its duration', async () => {
    const rows = await page.$$eval('#list li', (els) =>
      els.map((el) => ({
        height: el.getBoundingClientRect().height,
        line: parseFloat(getComputedStyle(el).lineHeight),
        ms: el.querySelector('.ms')?.textContent ?? '',
      })),
    );
    for (const row of rows) {
      expect(row.height).toBeLessThan(row.line * 2);
      expect(row.ms).toMatch(/^\d+(\.\d)? (ms|s)$/);
    }
    expect(await page.getAttribute('#list li:nth-child(1)', 'title')).toBe(
      'GET /mock/users/404 → 404: answered · GET /users/:id · missing',
    );
  });

  it('finds a status typed in the filter, not the digits anywhere', async () => {
    // 3 requests a minute: the first of these is admitted, the other three get 429.
    expect((await mock('/spare')).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await mock('/spare')).status).toBe(429);
    await page.waitForFunction(() => document.querySelectorAll('#list li').length === 6);
    await page.fill('#f-text', '429');
    await page.waitForFunction(() => document.querySelectorAll('#list li').length !== 6);
    // Not GET /users/7, whose answer body says "429".
    expect(await page.$$eval('#list li .status', (els) => els.map((el) => el.textContent))).toEqual([
      '429',
      '429',
      '429',
    ]);
    await page.fill('#f-text', '4xx');
    await page.waitForFunction(() => document.querySelectorAll('#list li').length === 4);
    await page.fill('#f-text', '');
    await page.waitForFunction(() => document.querySelectorAll('#list li').length === 6);
  });

  it('lists each answer with its status, condition, weight or steps and hits', async () => {
    await page.click('#tab-endpoints');
    await page.waitForFunction(
      () =>
        document.querySelector('[data-endpoint="GET /users/:id"] tr[data-answer="found"]')?.lastElementChild
          ?.textContent === '1',
    );
    const table = (endpoint: string) =>
      page.$$eval(`[data-endpoint="${endpoint}"] tr`, (rows) =>
        rows.map((r) => [...r.children].map((c) => c.textContent)),
      );
    expect(await table('GET /users/:id')).toEqual([
      ['answer', 'status', 'when', 'hits'],
      ['missing', '404', 'params.id = 404', '1'],
      ['closed', '503', 'state.checkout = closed', '0'],
      ['found', '200', 'always', '1'],
    ]);
    expect(await table('POST /orders')).toEqual([
      ['answer', 'status', 'when', 'weight', 'hits'],
      ['pick[0]', '201', 'always', '3', '0'],
      ['pick[1]', '402', 'always', '1', '0'],
    ]);
    expect(await table('GET /retry')).toEqual([
      ['answer', 'status', 'when', 'times', 'hits'],
      ['sequence[0]', '503', 'always', '×2', '0'],
      ['sequence[1]', '200', 'always', '×1', '0'],
    ]);
    await shot('endpoints');
  });

  it('offers the known states of a scenario as a choice, and sets one', async () => {
    await page.click('#tab-project');
    await page.waitForSelector('select[data-scenario="checkout"]');
    expect(
      await page.$$eval('select[data-scenario="checkout"] option', (els) => els.map((el) => el.textContent)),
    ).toEqual(['open', 'closed', 'paid']);
    await page.selectOption('select[data-scenario="checkout"]', 'closed');
    await page.click('#scenarios button[type=submit]');
    await page.waitForFunction(() => document.getElementById('toast')?.textContent === 'checkout is now closed');
    expect(await (await fetch(`${server.url}/__mockapi/scenarios`)).json()).toEqual({ checkout: 'closed' });
    await shot('project');
  });

  it('keeps both gauges whole in a narrow window', async () => {
    await page.click('#tab-requests');
    const tops = await page.$$eval('.gauge', (els) => els.map((el) => el.getBoundingClientRect().top));
    expect(tops[0]).toBe(tops[1]); // side by side where there is room
    for (const width of [900, 700, 480, 360]) {
      await page.setViewportSize({ width, height: 640 });
      const boxes = await page.$$eval('.gauge', (els) =>
        els.map((el) => ({
          right: el.getBoundingClientRect().right,
          left: el.getBoundingClientRect().left,
          cut: el.scrollWidth > el.clientWidth,
        })),
      );
      for (const box of boxes) {
        expect(box.left).toBeGreaterThanOrEqual(0);
        expect(box.right).toBeLessThanOrEqual(width);
        expect(box.cut).toBe(false);
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await shot(`narrow-${width}`);
    }
  });
});
