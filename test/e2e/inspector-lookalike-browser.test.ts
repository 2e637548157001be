/// <reference lib="dom" />
// The inspector of a look-alike config in a real browser (headless Chromium, the real CLI): each key
// of `keys:` shown by name with its plan, the trace naming where a key was read from and every place
// a missing key was looked for, and no key anywhere in the page — a key sent in the query included.
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { startServe, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_inspectLookalike0000000000000001';
const CI = 'ci_inspectLookalike0000000000000002';
const WRONG = 'sk_inspectLookalikeWrong0000000003';
const CONFIG = `project: look-alike
apiKey: ${KEY}
server: { basePath: /v1 }
auth:
  accept: [{ query: api_key }, { header: X-Api-Key }]
keys:
  - { name: ci, key: ${CI}, plan: pro }
plans:
  pro: { rateLimit: { requests: 50, window: 1m }, monthlyQuota: 900 }
errors:
  simulatedFailure:
    status: 503
    body: { error: { type: api_error, message: "An unknown error occurred" } }
endpoints:
  - method: GET
    path: /items
    response: { body: [] }
  - method: POST
    path: /items
    failRate: 0.25
    response: { status: 201 }
  - method: DELETE
    path: /items/:id
    failRate: 1
    response: { status: 204 }
`;

const dir = useTempDir('mockapi-inspector-lookalike-');
let server: ServeProcess;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  await writeConfig(dir.path, CONFIG);
  server = await startServe(['-c', join(dir.path, 'mockapi.yaml'), '--no-state', '--no-watch', '--log', 'off'], {
    cwd: dir.path,
  });
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1200, height: 720 } })).newPage();
});

afterAll(async () => {
  await browser?.close();
});

describe('the inspector of a look-alike config', () => {
  it('shows each key by name, says where each key was read or looked for, and never shows a key', async () => {
    const items = (query: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/v1/items${query}`, { headers }).then((r) => r.status);
    expect(await items(`?api_key=${CI}`)).toBe(200);
    expect(await items('')).toBe(401);
    expect(await items('', { 'x-api-key': WRONG })).toBe(401);
    await page.goto(`${server.url}/__mockapi/`);
    await page.waitForFunction(() => document.querySelectorAll('#list li').length === 3);
    await page.waitForFunction(() => /key ci/.test(document.getElementById('key-usage')?.textContent ?? ''));
    expect(await page.$$eval('#key-usage li', (els) => els.map((el) => el.textContent))).toEqual([
      'key default: 0 this month · no rate limit',
      'key ci (plan pro): 1 / 900 this month · window 1 / 50',
    ]);

    const traceOf = async (nth: number) => {
      await page.click(`#list li:nth-child(${nth})`);
      return page.$$eval('#trace li', (els) => els.map((el) => el.textContent)).then((lines) => lines[0]);
    };
    // Newest first: the wrong key, the missing one, the key of keys: in the query.
    expect(await traceOf(1)).toBe(
      'Auth: the key sent in the X-Api-Key header is not the current key → 401 "Invalid API key".',
    );
    expect(await traceOf(2)).toBe(
      'Auth: no credential — no key in the query parameter api_key or the X-Api-Key header → 401.',
    );
    expect(await traceOf(3)).toBe('Auth: the current key named ci, sent in the query parameter api_key.');
    const html = await page.content();
    for (const secret of [KEY, CI, WRONG]) expect(html).not.toContain(secret);
  });

  it("the Endpoints view says the config's base path and each endpoint's fail rate", async () => {
    await page.keyboard.press('2');
    await page.waitForSelector('#endpoints [data-endpoint="POST /items"]');
    expect(await page.textContent('#served-under')).toBe(' — served under /v1');
    expect(await page.textContent('#endpoints [data-endpoint="POST /items"] .fail-rate')).toBe('failRate 25%');
    expect(await page.$('#endpoints [data-endpoint="GET /items"] .fail-rate')).toBeNull();
  });

  it('the trace of a simulated failure quotes what was sent: the errors.simulatedFailure answer', async () => {
    const res = await fetch(`${server.url}/v1/items/7`, { method: 'DELETE', headers: { 'x-api-key': KEY } });
    expect([res.status, await res.json()]).toEqual([
      503,
      { error: { type: 'api_error', message: 'An unknown error occurred' } },
    ]);
    await page.keyboard.press('1');
    await page.waitForFunction(() => document.querySelectorAll('#list li').length === 4);
    await page.click('#list li:nth-child(1)');
    const lines = await page.$$eval('#trace li', (els) => els.map((el) => el.textContent));
    expect(lines).toContain('Fail rate: this request drew the simulated failure → 503 "An unknown error occurred".');
    expect(lines.join('\n')).not.toContain('Random failure triggered');
  });
});
