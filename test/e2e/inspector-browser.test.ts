/// <reference lib="dom" />
// The inspector (SPEC §9) in a real browser: headless Chromium driven by playwright-core, against
// the real CLI. What the page shows is checked against what the server says.
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { ROOT, startServe, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_inspectorTest00000000000000000001';
const CONFIG = `project: shop-api
apiKey: ${KEY}
limits:
  rateLimit: { requests: 5, window: 1m }
  monthlyQuota: 1000
endpoints:
  - method: GET
    path: /users/:id
    response:
      body: { id: 42, name: Ada }
  - method: POST
    path: /orders
    response:
      status: 201
      body: { ok: true }
`;

const dir = useTempDir('mockapi-inspector-');
let server: ServeProcess;
let browser: Browser;
let context: BrowserContext;
let page: Page;

function mock(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${server.mock}${path}`, init);
}

async function admin<T>(path: string): Promise<T> {
  return (await (await fetch(`${server.url}/__mockapi/${path}`)).json()) as T;
}

/** The visible text of the whole page. */
function pageText(): Promise<string> {
  return page.evaluate(() => document.body.innerText);
}

beforeAll(async () => {
  await writeConfig(dir.path, CONFIG);
  server = await startServe(['-c', join(dir.path, 'mockapi.yaml'), '--no-state', '--log', 'off']);
  browser = await launchChromium();
  context = await browser.newContext({
    viewport: { width: 1200, height: 720 },
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
});

afterAll(async () => {
  await browser?.close();
});

describe('the inspector page', () => {
  it('is announced by serve on the line after the ready line', async () => {
    // startServe resolves on the ready line; the next line is a separate write that may come later.
    await server.waitForOutput(/^inspector: /m, 'stdout');
    const lines = server.stdout().split('\n');
    const ready = lines.findIndex((line) => line.startsWith('mockapi listening on '));
    expect(lines[ready]).toBe(`mockapi listening on ${server.url} (2 endpoints)`);
    expect(lines[ready + 1]).toBe(`inspector: ${server.url}/__mockapi/`);
  });

  it('shows a useful empty state without the key, and no request to anything but its own origin', async () => {
    const origins = new Set<string>();
    page.on('request', (req) => origins.add(new URL(req.url()).origin));
    await page.goto(`${server.url}/__mockapi/`);
    // The empty state is drawn before the endpoints arrive (with a bare /mock), then again with the first one.
    const wanted = `curl -H "X-API-Key: $MOCKAPI_KEY" '${server.url}/mock/users/42'`;
    await page
      .waitForFunction((text) => document.getElementById('example')?.textContent === text, wanted, { timeout: 10_000 })
      .catch(() => undefined);
    expect(await page.textContent('#example')).toBe(wanted);
    await page.waitForFunction(() => document.getElementById('live')?.textContent === 'live');
    expect(await page.content()).not.toContain(KEY);
    expect([...origins]).toEqual([server.url]);
  });

  it('shows requests live, newest first, with why each got its answer', async () => {
    expect((await mock('/users/42?x=1', { headers: { 'x-api-key': KEY } })).status).toBe(200);
    expect((await mock('/users/7')).status).toBe(401);
    expect((await mock('/user/7', { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(404);
    expect(
      (
        await mock('/orders', {
          method: 'POST',
          headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
          body: '{"item":"cup","note":"it\'s"}',
        })
      ).status,
    ).toBe(201);
    // Live: from the event stream, without reloading the page.
    await page.waitForFunction(() => document.querySelectorAll('#list li').length === 4);
    const statuses = await page.$$eval('#list li .status', (els) => els.map((el) => el.textContent));
    expect(statuses).toEqual(['201', '404', '401', '200']);

    await page.click('#list li:nth-child(2)');
    const trace = await page.$$eval('#trace li', (els) => els.map((el) => el.textContent));
    expect(trace).toEqual([
      'Auth: the current key, sent in an Authorization: Bearer header.',
      'Rate limit and quota: admitted, and counted towards this month.',
      'Match: no endpoint for GET /mock/user/7 → 404.',
      'Server note: did you mean GET /users/:id?.',
    ]);
    await page.click('#list li:nth-child(3)');
    expect(await page.textContent('#trace')).toContain('Auth: no credential');
    expect(await page.content()).not.toContain(KEY);
  });

  it('filters by status, step, endpoint and text', async () => {
    await page.selectOption('#f-status', '4');
    await page.waitForFunction(() => document.querySelectorAll('#list li').length === 2);
    await page.selectOption('#f-status', '');
    await page.selectOption('#f-step', 'auth');
    await page.waitForFunction(() => document.querySelectorAll('#list li').length === 1);
    await page.selectOption('#f-step', '');
    await page.selectOption('#f-endpoint', 'POST /orders');
    await page.waitForFunction(() => document.querySelectorAll('#list li').length === 1);
    await page.selectOption('#f-endpoint', '');
    await page.fill('#f-text', 'cup');
    await page.waitForFunction(() => document.querySelectorAll('#list li').length === 1);
    await page.fill('#f-text', '');
    await page.waitForFunction(() => document.querySelectorAll('#list li').length === 4);
  });

  it('is usable from the keyboard: list, detail and back', async () => {
    await page.focus('#list');
    await page.keyboard.press('Home');
    expect(await page.getAttribute('#list li:nth-child(1)', 'aria-selected')).toBe('true');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('j');
    expect(await page.getAttribute('#list li:nth-child(3)', 'aria-selected')).toBe('true');
    await page.keyboard.press('k');
    expect(await page.getAttribute('#list li:nth-child(2)', 'aria-selected')).toBe('true');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('detail');
    expect(await page.textContent('#detail h2')).toContain('/mock/user/7');
    await page.keyboard.press('Escape');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('list');
    await page.keyboard.press('/');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('f-text');
    await page.keyboard.press('Escape');
  });

  it('copies a request as cURL with $MOCKAPI_KEY, which replays it', async () => {
    await page.click('#list li:nth-child(1)');
    await page.click('#copy-curl');
    // The page writes the clipboard asynchronously (a permission check, then the write).
    const curl = await page.textContent('#curl');
    const copied = await waitFor(async () => {
      const text = await page.evaluate(() => navigator.clipboard.readText());
      return text === curl ? text : undefined;
    }).catch(async () => page.evaluate(() => navigator.clipboard.readText()));
    expect(copied).toBe(curl);
    expect(copied).toContain('-H "X-API-Key: $MOCKAPI_KEY"');
    expect(copied).not.toContain(KEY);
    const replay = await promisify(execFile)('sh', ['-c', `${copied} -s -o /dev/null -w '%{http_code}'`], {
      env: { ...process.env, MOCKAPI_KEY: KEY },
    });
    expect(replay.stdout).toBe('201');
    const [last] = (await admin<{ requests: { body: string }[] }>('requests?limit=1')).requests;
    expect(last?.body).toBe('{"item":"cup","note":"it\'s"}');
  });

  it('shows gauges that match /__mockapi/usage', async () => {
    await page.waitForFunction(() => document.querySelectorAll('#list li').length === 5);
    const usage = await admin<{ requests: number; quota: number; rateLimit: { limit: number; remaining: number } }>(
      'usage',
    );
    expect(usage.requests).toBe(4); // 200, 404, 201 and the replayed 201
    await page.waitForFunction(() => document.querySelector('#gauge-quota .gauge-value')?.textContent === '4 / 1,000');
    await page.waitForFunction(() => document.querySelector('#gauge-rate .gauge-value')?.textContent === '4 / 5');
    expect(await page.getAttribute('#gauge-quota', 'aria-valuenow')).toBe('4');
    expect(await page.textContent('#gauge-rate .gauge-note')).toMatch(/^1 free — next slot frees in \d+ s$/);
    expect(await page.textContent('#gauge-quota .gauge-note')).toMatch(/^996 left · resets .+ \(UTC\)$/);
  });

  it('makes the screenshot the README shows', async () => {
    await page.click('#list li:nth-child(2)');
    await page.evaluate(() => document.getElementById('toast')?.classList.remove('show'));
    const png = await page.screenshot({ animations: 'disabled', clip: { x: 0, y: 0, width: 1200, height: 560 } });
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    if (process.env.UPDATE_SCREENSHOT === '1') await writeFile(join(ROOT, 'docs', 'inspector.png'), png);
  });

  it('lists the endpoints with their answers and counts', async () => {
    await page.keyboard.press('2');
    // Opening the view fetches the counts; until that answer arrives it shows the ones from page load.
    await page.waitForFunction(() =>
      /GET\/users\/:id1 request(?!s)/.test(document.getElementById('endpoints')?.textContent ?? ''),
    );
    const text = await page.textContent('#endpoints');
    expect(text).toContain('GET/users/:id1 request');
    expect(text).toContain('POST/orders2 requests');
  });

  it('keeps the key masked until "Show", and copies it on demand', async () => {
    await page.keyboard.press('3');
    await page.waitForSelector('#api-key');
    expect(await page.textContent('#api-key')).toBe('…0001');
    expect(await page.content()).not.toContain(KEY);
    await page.click('#copy-key');
    await waitFor(async () => (await page.evaluate(() => navigator.clipboard.readText())) === KEY);
    expect(await page.content()).not.toContain(KEY);
    await page.click('#show-key');
    await page.waitForFunction((key) => document.getElementById('api-key')?.textContent === key, KEY);
    await page.click('#show-key');
    await page.waitForFunction(() => document.getElementById('api-key')?.textContent === '…0001');
  });

  it("Reset usage zeroes the count and the rate window, and nothing else (a test's stubs stay)", async () => {
    const json = { 'content-type': 'application/json' };
    const added = await fetch(`${server.url}/__mockapi/stubs`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ endpoint: { method: 'GET', path: '/stubbed' } }),
    });
    const { id } = (await added.json()) as { id: string };
    await page.click('#reset-usage');
    await waitFor(async () => (await admin<{ requests: number }>('usage')).requests === 0);
    await page.waitForFunction(() => document.querySelector('#gauge-quota .gauge-value')?.textContent === '0 / 1,000');
    expect((await admin<{ rateLimit: { remaining: number } }>('usage')).rateLimit.remaining).toBe(5);
    expect((await admin<{ stubs: { id: string }[] }>('stubs')).stubs.map((s) => s.id)).toEqual([id]);
    await fetch(`${server.url}/__mockapi/stubs/${id}`, { method: 'DELETE', headers: json });
  });

  it('Rotate key writes a new key into the file; the old key gets 401 and is then named as the previous one', async () => {
    const file = join(dir.path, 'mockapi.yaml');
    await page.click('#rotate-key');
    const rotated = await waitFor(async () => {
      const text = await readFile(file, 'utf8');
      return text.includes(KEY) ? undefined : text;
    });
    const newKey = /apiKey: (\S+)/.exec(rotated)![1]!;
    expect(newKey).toMatch(/^mk_/);
    expect(rotated).toBe(CONFIG.replace(KEY, newKey));
    // The page shows the new key once the server serves it (the file is written before the server
    // reloads it). Not polled with the old key meanwhile: each of its 200s would take one of the 5 slots.
    await page.waitForFunction(
      (masked) => document.getElementById('api-key')?.textContent === masked,
      `…${newKey.slice(-4)}`,
    );
    expect(await page.content()).not.toContain(newKey);
    expect((await mock('/users/1', { headers: { 'x-api-key': KEY } })).status).toBe(401);
    expect((await mock('/users/1', { headers: { 'x-api-key': newKey } })).status).toBe(200);
    // The old key's 401 reaches the list by the event stream, on its own time: click its row by id
    // (playwright waits for it) rather than the second row of whatever the list holds now.
    const [refused, answered] = (await admin<{ requests: { id: number; status: number }[] }>('requests?limit=2'))
      .requests;
    expect([refused?.status, answered?.status]).toEqual([401, 200]);
    await page.keyboard.press('1');
    await page.click(`#req-${refused!.id}`);
    expect(await page.textContent('#trace')).toContain('is the key before the last rotation');
  });

  it('is readable in dark mode', async () => {
    const light = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(light).toBe('rgb(251, 251, 252)');
    expect(dark).toBe('rgb(18, 21, 27)');
    expect(await pageText()).toContain('Requests');
  });
});
