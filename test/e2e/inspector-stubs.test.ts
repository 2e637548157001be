/// <reference lib="dom" />
// The inspector's Endpoints view lists the run-time stubs (POST /__mockapi/stubs) with their method,
// path, answers left and hits, and removes one with its Remove button (DELETE /__mockapi/stubs/<id>).
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { startServe, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_inspectorStubs0000000000000001';
const CONFIG = `project: stubs
apiKey: ${KEY}
endpoints:
  - method: GET
    path: /users/:id
`;

const dir = useTempDir('mockapi-inspector-stubs-');
let server: ServeProcess;
let browser: Browser;
let page: Page;

async function admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${server.url}/__mockapi${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** The stubs table as text, row by row, without the header. */
function rows(): Promise<string[][]> {
  return page.$$eval('#stubs tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent ?? '')));
}

beforeAll(async () => {
  await writeConfig(dir.path, CONFIG);
  server = await startServe(['-c', join(dir.path, 'mockapi.yaml'), '--no-state', '--log', 'off']);
  browser = await launchChromium();
  page = await (await browser.newContext()).newPage();
});

afterAll(async () => {
  await browser?.close();
});

describe('the inspector lists run-time stubs', () => {
  it('shows no stubs card while there are none', async () => {
    await page.goto(`${server.url}/__mockapi/`);
    await page.click('#tab-endpoints');
    await page.waitForSelector('#endpoints');
    expect(await page.$('#stubs')).not.toBeNull();
    expect(await page.isHidden('#stubs')).toBe(true);
  });

  it('lists two stubs added over HTTP, updates hits on requests, and removes one with its button', async () => {
    const gone = await admin('POST', '/stubs', {
      name: '<b>user-gone</b>',
      times: 2,
      endpoint: { method: 'GET', path: '/users/:id', response: { status: 404 } },
    });
    expect(gone.status).toBe(201);
    const down = await admin('POST', '/stubs', {
      endpoint: { method: 'POST', path: '/payments', response: { status: 503 } },
    });
    expect(down.status).toBe(201);
    const goneId = (gone.body as { id: string }).id;
    const downId = (down.body as { id: string }).id;

    // Opening the view reads the stubs.
    await page.click('#tab-requests');
    await page.click('#tab-endpoints');
    await page.waitForFunction(() => document.querySelectorAll('#stubs tbody tr').length === 2);
    expect(await page.textContent('#stubs h2')).toBe('Run-time stubs (2) — answer before the config, newest first');
    expect(await rows()).toEqual([
      [downId, 'POST', '/payments', '∞', '0', 'Remove'],
      ['<b>user-gone</b>', 'GET', '/users/:id', '2/2', '0', 'Remove'],
    ]);
    expect(await page.$('#stubs b')).toBeNull(); // a name is text, never markup

    // A request the stub answers: its row follows (request events refresh the shown view).
    expect((await fetch(`${server.mock}/users/1`, { headers: { 'x-api-key': KEY } })).status).toBe(404);
    await page.waitForFunction(
      () => document.querySelector('#stubs tr:last-child td:nth-child(5)')?.textContent === '1',
    );
    expect((await rows())[1]).toEqual(['<b>user-gone</b>', 'GET', '/users/:id', '1/2', '1', 'Remove']);

    await page.click(`#stubs tr[data-stub="${goneId}"] button`);
    await page.waitForFunction(() => document.querySelectorAll('#stubs tbody tr').length === 1);
    expect(await rows()).toEqual([[downId, 'POST', '/payments', '∞', '0', 'Remove']]);
    const left = await admin('GET', '/stubs');
    expect(left.status).toBe(200);
    expect((left.body as { stubs: { id: string }[] }).stubs.map((s) => s.id)).toEqual([downId]);
    expect(await page.textContent('#toast')).toBe('Removed stub <b>user-gone</b>');

    await page.click(`#stubs tr[data-stub="${downId}"] button`);
    await page.waitForSelector('#stubs', { state: 'hidden' });
    expect(await admin('GET', '/stubs')).toEqual({ status: 200, body: { stubs: [] } });
  });
});
