/// <reference lib="dom" />
// SPEC §8's safety rules, held by the inspector too: a page from another origin, open in the same
// browser, can neither read nor change anything through the admin API or the inspector.
import { readFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { startServe, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_inspectorOrigin000000000000000001';
const CONFIG = `apiKey: ${KEY}
limits:
  monthlyQuota: 1000
endpoints:
  - method: GET
    path: /users/:id
    response:
      body: { id: 42 }
`;

/** Everything a hostile page could try; each attempt reports what it could read. */
function hostilePage(target: string): string {
  return `<!doctype html><title>hostile</title><body>
<iframe name="sink" id="sink"></iframe>
<iframe id="framed" src="${target}/__mockapi/" onload="window.framedLoaded = true"></iframe>
<form id="f1" method="POST" action="${target}/__mockapi/rotate-key" enctype="text/plain" target="sink"><input name='{"key":"mk_evil000000000000","x":"' value='"}'></form>
<form id="f2" method="POST" action="${target}/__mockapi/reset" target="sink"><input name="usage" value="true"></form>
<script>
const T = ${JSON.stringify(target)};
const results = {};
async function attempt(name, run) {
  try { results[name] = await run(); } catch (e) { results[name] = 'blocked: ' + e.name; }
}
async function read(res) { return res.type === 'opaque' ? 'opaque' : 'READ ' + res.status + ' ' + await res.text(); }
(async () => {
  await attempt('requests', async () => read(await fetch(T + '/__mockapi/requests')));
  await attempt('project', async () => read(await fetch(T + '/__mockapi/project?reveal=true')));
  await attempt('page', async () => read(await fetch(T + '/__mockapi/')));
  await attempt('usage-no-cors', async () => read(await fetch(T + '/__mockapi/usage', { mode: 'no-cors' })));
  await attempt('reset-text', async () => read(await fetch(T + '/__mockapi/reset', { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '{}' })));
  await attempt('reset-json', async () => read(await fetch(T + '/__mockapi/reset', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })));
  await attempt('rotate-json', async () => read(await fetch(T + '/__mockapi/rotate-key', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })));
  await attempt('clear-journal', async () => read(await fetch(T + '/__mockapi/requests', { method: 'DELETE', mode: 'no-cors' })));
  await attempt('events', () => new Promise((done) => { const es = new EventSource(T + '/__mockapi/events'); es.onmessage = (e) => done('READ ' + e.data); es.onerror = () => { es.close(); done('blocked: error'); }; }));
  // Conditions, not sleeps: the frame has loaded (or been refused), each form's answer has reached the sink.
  await attempt('framed', async () => { while (!window.framedLoaded) await new Promise((r) => setTimeout(r, 10)); return 'READ ' + document.getElementById('framed').contentDocument.body.innerText; });
  const submitted = (id) => new Promise((done) => { document.getElementById('sink').addEventListener('load', done, { once: true }); document.getElementById(id).submit(); });
  await submitted('f1');
  await submitted('f2');
  document.title = 'done';
  window.results = results;
})();
</script></body>`;
}

const dir = useTempDir('mockapi-inspector-origin-');
let server: ServeProcess;
let hostile: Server;
let browser: Browser;

beforeAll(async () => {
  await writeConfig(dir.path, CONFIG);
  server = await startServe(['-c', join(dir.path, 'mockapi.yaml'), '--no-state', '--log', 'off']);
  const html = hostilePage(server.url);
  hostile = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
  await new Promise<void>((done) => hostile.listen(0, '127.0.0.1', done));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((done) => hostile?.close(done));
});

async function adminJson<T>(path: string): Promise<T> {
  return (await (await fetch(`${server.url}/__mockapi/${path}`)).json()) as T;
}

it('a page on another origin can neither read nor change anything', async () => {
  const file = join(dir.path, 'mockapi.yaml');
  expect((await fetch(`${server.mock}/users/1`, { headers: { 'x-api-key': KEY } })).status).toBe(200);
  const before = {
    file: await readFile(file, 'utf8'),
    usage: await adminJson<{ requests: number }>('usage'),
    journal: await adminJson<{ count: number }>('requests/count'),
  };
  expect(before.usage.requests).toBe(1);

  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${(hostile.address() as AddressInfo).port}/`);
  await page.waitForFunction(() => document.title === 'done', undefined, { timeout: 20_000 });
  const results = await page.evaluate(() => (window as unknown as { results: Record<string, string> }).results);
  expect(Object.keys(results).sort()).toEqual(
    [
      'clear-journal',
      'events',
      'framed',
      'page',
      'project',
      'requests',
      'reset-json',
      'reset-text',
      'rotate-json',
      'usage-no-cors',
    ].sort(),
  );
  for (const [name, outcome] of Object.entries(results)) expect(outcome, name).toMatch(/^(blocked|opaque)/);
  expect(JSON.stringify(results)).not.toContain(KEY);

  expect(await readFile(file, 'utf8')).toBe(before.file);
  expect(await adminJson('usage')).toEqual(before.usage);
  expect(await adminJson('requests/count')).toEqual(before.journal);
  expect((await fetch(`${server.mock}/users/1`, { headers: { 'x-api-key': KEY } })).status).toBe(200);
  await page.close();
});

it('the inspector page answers only a loopback Host (DNS rebinding), and may not be framed', async () => {
  const status = (host: string) =>
    new Promise<{ status: number | undefined; headers: Record<string, unknown> }>((done, fail) => {
      const req = request(`${server.url}/__mockapi/`, { headers: { host } }, (res) => {
        res.resume();
        done({ status: res.statusCode, headers: res.headers });
      });
      req.on('error', fail).end();
    });
  expect((await status('evil.example:4010')).status).toBe(403);
  const ok = await status(new URL(server.url).host);
  expect(ok.status).toBe(200);
  expect(ok.headers['x-frame-options']).toBe('DENY');
  expect(ok.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(ok.headers['access-control-allow-origin']).toBeUndefined();
});
