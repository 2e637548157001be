// `serve --workers 2` without a store: what one worker's answers change is every worker's — an
// answer's setState (before that answer is sent), the answers' hits in GET /__mockapi/endpoints —
// a hot reload adding what start-up refuses without a store (limits) is refused too, and one adding
// resources is served, the objects shared by every worker (the primary keeps them).
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startServe, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { call, workerUrls } from '../helpers/workers.js';

const KEY = 'mk_workers_sync_key_0123456789';
const dir = useTempDir('mockapi-workers-sync-', { each: true });

const CONFIG = `project: workers-sync
apiKey: ${KEY}
scenarios:
  payment: { initial: up }
endpoints:
  - method: POST
    path: /pay
    responses:
      - when: { state.payment: down }
        status: 503
      - status: 201
        setState: { payment: down }
  - method: GET
    path: /a
    responses:
      - when: { query.v: "1" }
        name: one
        body: { v: 1 }
      - name: other
        body: { v: 0 }
`;

let serve: ServeProcess | undefined;
afterEach(async () => {
  await serve?.stop('SIGTERM');
  serve = undefined;
});

/** `serve --workers 2 --no-state` (or with the state file) on `config`; resolves with the file and each worker's own URL. */
async function start(config: string, state = false): Promise<{ file: string; own: [string, string] }> {
  const file = await writeConfig(dir.path, config);
  const args = ['-c', file, '--workers', '2', ...(state ? [] : ['--no-state']), '--log', 'off'];
  serve = await startServe(args, { cwd: dir.path });
  const own = await waitFor(async () => {
    const urls = await workerUrls(dir.path);
    return urls.length === 2 ? urls : undefined;
  });
  return { file, own: own as [string, string] };
}

const mock = (url: string, method: string, path: string) =>
  call(url, method, `/mock${path}`, { headers: { 'x-api-key': KEY } });

describe('serve --workers: what an answer changes is every worker’s', () => {
  it("an answer's setState holds on every worker once that answer is received", async () => {
    const { own } = await start(CONFIG);
    const [a, b] = own;
    expect((await mock(a, 'POST', '/pay')).status).toBe(201);
    // The next request, on the other worker, sees the state the first answer set.
    expect((await mock(b, 'POST', '/pay')).status).toBe(503);
    expect((await mock(a, 'POST', '/pay')).status).toBe(503);
    for (const url of own) expect((await call(url, 'GET', '/__mockapi/scenarios')).body).toEqual({ payment: 'down' });
    // Through the shared port too: every later request is refused, whichever worker takes it.
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await mock(serve!.url, 'POST', '/pay')).status);
    expect(statuses).toEqual([503, 503, 503, 503]);
  });

  it('GET /__mockapi/endpoints adds up every worker’s hits per answer', async () => {
    const { own } = await start(CONFIG);
    const [a, b] = own;
    expect((await mock(a, 'GET', '/a?v=1')).status).toBe(200);
    expect((await mock(b, 'GET', '/a?v=1')).status).toBe(200);
    expect((await mock(b, 'GET', '/a')).status).toBe(200);
    for (const url of own) {
      const { endpoints } = (await call(url, 'GET', '/__mockapi/endpoints')).body as {
        endpoints: { endpoint: string; requests: number; answerDetails: { name: string; requests: number }[] }[];
      };
      const info = endpoints.find((e) => e.endpoint === 'GET /a')!;
      expect(info.requests).toBe(3);
      expect(info.answerDetails.map((d) => [d.name, d.requests])).toEqual([
        ['one', 2],
        ['other', 1],
      ]);
    }
  });
});

describe('serve --workers with the state file: a reset loses nothing counted since', () => {
  it("POST /__mockapi/reset zeroes the month once, and every worker's requests after it count", async () => {
    const { own } = await start(CONFIG, true);
    const [a, b] = own;
    for (const url of [a, b, a, b]) expect((await mock(url, 'GET', '/a')).status).toBe(200);
    expect((await call(a, 'POST', '/__mockapi/reset', { body: {} })).status).toBe(200);
    // Counted right after the reset, on both workers, before either wrote its count.
    for (const url of [a, a, b]) expect((await mock(url, 'GET', '/a')).status).toBe(200);
    const stateFile = join(dir.path, '.mockapi', 'state.json');
    const counts = async () => [
      ((await call(a, 'GET', '/__mockapi/usage')).body as { requests: number }).requests,
      ((await call(b, 'GET', '/__mockapi/usage')).body as { requests: number }).requests,
      (JSON.parse(await readFile(stateFile, 'utf8')) as { usage: { requests: number } }).usage.requests,
    ];
    // Every worker writes within a second of counting; then the file and both workers say 3.
    await waitFor(async () => (await counts()).every((n) => n === 3), 15_000).catch(async (err: Error) => {
      throw new Error(`${err.message}; counts (a, b, file): ${JSON.stringify(await counts())}\n${serve!.stderr()}`);
    });
    expect(serve!.stderr()).not.toMatch(/was changed outside this server/);
  });
});

describe('serve --workers without a store: a reload that would need one is refused', () => {
  const refusals = (what: RegExp) => (serve!.stderr().match(new RegExp(what.source, 'g')) ?? []).length;

  it('limits: the last good config keeps serving, and one line says why', async () => {
    const { file, own } = await start(CONFIG);
    await appendFile(file, 'limits:\n  rateLimit: { requests: 4, window: 1m }\n');
    const why =
      /mockapi warning: config not reloaded, still serving the last good one: --workers needs a shared store when limits are configured \(limits\.rateLimit, limits\.monthlyQuota, limits\.meters\): set limits\.store or pass --store redis:\/\/host:port\/db, or run without --workers \(each worker would keep limits of its own\)/;
    // Every worker refuses it; one of them says so for the server (not once per worker).
    await waitFor(() => refusals(why) === 1, 20_000);
    const statuses = [];
    for (let i = 0; i < 10; i++) statuses.push((await mock(own[i % 2]!, 'GET', '/a')).status);
    expect(statuses).toEqual(Array(10).fill(200));
    expect(serve!.stderr()).not.toMatch(/mockapi reloaded/);
    expect(refusals(why)).toBe(1);
  });
});

describe('serve --workers without a store: a reload that brings resources', () => {
  it('is served by every worker, and the objects are shared', async () => {
    const { file, own } = await start(CONFIG);
    await appendFile(file, 'resources:\n  customers:\n    style: rest\n    path: /customers\n');
    await waitFor(
      async () => (await Promise.all(own.map((url) => mock(url, 'GET', '/customers')))).every((r) => r.status === 200),
      20_000,
    );
    const [a, b] = own;
    const made = await call(a, 'POST', '/mock/customers', { headers: { 'x-api-key': KEY }, body: { name: 'x' } });
    expect(made.status).toBe(201);
    expect((await mock(b, 'GET', `/customers/${made.body.id}`)).body).toEqual(made.body);
    expect(serve!.stderr()).not.toMatch(/config not reloaded/);
  });
});
