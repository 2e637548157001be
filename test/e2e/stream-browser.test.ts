// A browser's own EventSource (headless Chromium) receives a GET stream: its messages, named
// events, ids and multi-line data as the browser parses them.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { startServe, stopAll, tempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_streamBrowser000000000000000001';

const PAGE = `<!doctype html><meta charset="utf-8"><title>sse</title><script>
window.got = [];
const source = new EventSource('/mock/sse?who=browser');
const keep = (e) => window.got.push({ type: e.type, data: e.data, id: e.lastEventId });
source.onmessage = keep;
source.addEventListener('note', keep);
source.addEventListener('done', (e) => { keep(e); source.close(); window.finished = true; });
</script>`;

const CONFIG = `apiKey: ${KEY}
endpoints:
  - method: GET
    path: /page
    response:
      headers: { content-type: text/html; charset=utf-8 }
      body: ${JSON.stringify(PAGE)}
  - method: GET
    path: /sse
    response:
      stream:
        gap: 5ms
        events:
          - { data: "hello \${query.who}", id: "1" }
          - { event: note, data: "two\\nlines", id: "2" }
          - { comment: "ignored by the browser" }
          - $each: [x, y]
            data: "item \${item}"
          - { event: done, data: bye }
`;

let proc: ServeProcess;
let browser: Browser;

beforeAll(async () => {
  const dir = await tempDir('mockapi-stream-browser-');
  proc = await startServe(['-c', await writeConfig(dir, CONFIG), '--no-state', '--no-watch']);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await stopAll();
});

describe('EventSource in a browser', () => {
  test('receives every message and named event, with ids and multi-line data', async () => {
    const context = await browser.newContext({ extraHTTPHeaders: { 'x-api-key': KEY } });
    const page = await context.newPage();
    await page.goto(`${proc.mock}/page`);
    await page.waitForFunction(() => (window as unknown as { finished?: boolean }).finished === true, undefined, {
      timeout: 10_000,
    });
    const got = await page.evaluate(() => (window as unknown as { got: unknown[] }).got);
    expect(got).toEqual([
      { type: 'message', data: 'hello browser', id: '1' },
      { type: 'note', data: 'two\nlines', id: '2' },
      { type: 'message', data: 'item x', id: '2' },
      { type: 'message', data: 'item y', id: '2' },
      { type: 'done', data: 'bye', id: '2' },
    ]);
    await context.close();
  });

  test("the inspector draws the stream's timeline from its journal entry", async () => {
    const page = await browser.newPage();
    await page.goto(`${proc.url}/__mockapi/`);
    await page.click('#list li:has-text("/mock/sse")');
    await page.waitForSelector('#stream-summary');
    expect(await page.textContent('#stream-summary')).toMatch(
      /^6 of 6 events sent · ended: complete · first byte [\d.]+ ms · [\d.]+ ms in all$/,
    );
    expect(
      await page.$eval('#stream-progress', (el) => [
        (el as HTMLProgressElement).value,
        (el as HTMLProgressElement).max,
      ]),
    ).toEqual([6, 6]);
    if (process.env.STREAM_SHOT) await page.screenshot({ path: process.env.STREAM_SHOT });
    expect(
      await page.$$eval('#stream-timeline svg rect', (rects) => rects.map((r) => r.getAttribute('class'))),
    ).toEqual(['wait', 'flow complete']);
    await page.close();
  });
});
