// Sessions (issue 42) in the inspector, in Debian's chromium: the page opened for a session
// (`/__mockapi/?session=<id>` or under `/__session/<id>/`) says so in its header and lists that
// session's requests alone — those made before it opened and those its event stream brings live.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { startServe, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { mock } from '../helpers/control.js';

const KEY = 'mk_sessionsInspector0000000000000001';
const dir = useTempDir('mockapi-sessions-inspector-');
let server: ServeProcess;
let browser: Browser;

const get = (path: string, session: string) =>
  mock(server.url, 'GET', `/mock${path}`, {
    headers: { 'x-api-key': KEY, ...(session === '' ? {} : { 'x-mockapi-session': session }) },
  });
/** The paths the page lists, newest first. */
const listed = (page: Page) => page.$$eval('#list li', (els) => els.map((el) => el.textContent ?? ''));

beforeAll(async () => {
  const config = await writeConfig(
    dir.path,
    `project: shop-api\napiKey: ${KEY}\nendpoints:\n  - { method: GET, path: /items/:id, response: { body: { ok: true } } }\n`,
  );
  server = await startServe(['-c', config, '--no-state', '--log', 'off']);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('the inspector of one session', () => {
  test.each([
    ['?session=', (id: string) => `/__mockapi/?session=${id}`],
    ['the path prefix', (id: string) => `/__session/${id}/__mockapi/`],
  ])('opened with %s, it shows that session alone, before and live', async (way, address) => {
    const [mine, other] = way === '?session=' ? ['ins-a', 'ins-b'] : ['ins-c', 'ins-d'];
    expect((await get(`/items/${mine}-before`, mine)).status).toBe(200);
    expect((await get(`/items/${other}-before`, other)).status).toBe(200);
    expect((await get('/items/default-before', '')).status).toBe(200);
    const page = await browser.newPage();
    await page.goto(`${server.url}${address(mine)}`);
    await page.waitForFunction(() => document.getElementById('live')?.textContent === 'live');
    // The title comes from the config's fetches, the live mark from the event stream: either may be first.
    await page.waitForFunction(() => document.getElementById('project')?.textContent !== '');
    expect(await page.textContent('#project')).toBe(`shop-api · session ${mine}`);
    await page.waitForFunction(() => document.querySelectorAll('#list li').length === 1);
    // Live: another session's request and the default session's come and go unseen; its own arrives.
    await get(`/items/${other}-live`, other);
    await get('/items/default-live', '');
    await get(`/items/${mine}-live`, mine);
    await page.waitForFunction(() => document.querySelectorAll('#list li').length === 2);
    const rows = await listed(page);
    expect(rows[0]).toContain(`/mock/items/${mine}-live`);
    expect(rows[1]).toContain(`/mock/items/${mine}-before`);
    expect((await page.content()).includes(other)).toBe(false);
    expect(await page.content()).not.toContain('default-');
    await page.close();
  });
});
