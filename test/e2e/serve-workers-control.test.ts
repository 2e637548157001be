// SPEC §12 last bullet with SPEC §8: with `serve --workers`, whichever worker an admin call reaches
// answers for the whole server — the journal, waits, events and endpoint counts cover every worker's
// requests, and reset, DELETE and scenario PUT reach every worker before the call answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { call } from '../helpers/workers.js';
import { startWorkersServe, type WorkersServe } from '../helpers/workers-serve.js';

const KEY = 'mk_workers_control_key_0123456789';
const dir = useTempDir('mockapi-workers-control-');
let serve: ServeProcess;
let own: string[];

const CONFIG = `project: workers-control
apiKey: ${KEY}
limits:
  rateLimit: { requests: 10, window: 1h }
scenarios:
  cart: { initial: empty }
endpoints:
  - method: GET
    path: /a
    response:
      body: { ok: true }
  - method: GET
    path: /cart
    responses:
      - when: { state.cart: full }
        body: { cart: full }
      - body: { cart: empty }
  - method: GET
    path: /seq
    responses:
      - sequence:
          - body: { n: 1 }
          - body: { n: 2 }
`;

const mockCall = (url: string, path: string) => call(url, 'GET', `/mock${path}`, { headers: { 'x-api-key': KEY } });
const ids = (requests: { id: number }[]) => requests.map((r) => r.id);

let workers: WorkersServe | undefined;
beforeAll(async () => {
  workers = await startWorkersServe(dir.path, CONFIG);
  ({ serve, own } = workers);
});
afterAll(() => workers?.stop());

async function fresh(): Promise<void> {
  expect((await call(own[0]!, 'POST', '/__mockapi/reset', { body: {} })).status).toBe(200);
}

describe('serve --workers: the journal and the admin API cover every worker (SPEC §12)', () => {
  it("lists every worker's requests with unique increasing ids, whichever worker answers", async () => {
    await fresh();
    const [a, b] = own as [string, string];
    const sent: string[] = [];
    // Alternating workers through their own ports, and the shared port on fresh connections.
    for (let i = 0; i < 3; i++) {
      for (const [target, name] of [
        [a, 'a'],
        [b, 'b'],
        [serve.url, 's'],
      ] as const) {
        const path = `/mock/a?from=${name}${i}`;
        sent.push(`${name}${i}`);
        expect((await call(target, 'GET', path, { headers: { 'x-api-key': KEY } })).status).toBe(200);
      }
    }
    // Asked right after the answers: no waiting, every worker must already see all nine.
    for (const target of [a, b, ...Array.from({ length: 6 }, () => serve.url)]) {
      const { status, body } = await call(target, 'GET', '/__mockapi/requests?path=/mock/a');
      expect(status).toBe(200);
      expect(body.requests.map((r: { query: { from: string } }) => r.query.from)).toEqual(sent);
      const list = ids(body.requests);
      expect(new Set(list).size).toBe(9);
      expect([...list].sort((x, y) => x - y)).toEqual(list);
      expect((await call(target, 'GET', '/__mockapi/requests/count?path=/mock/a')).body).toEqual({ count: 9 });
      const endpoints = (await call(target, 'GET', '/__mockapi/endpoints')).body.endpoints as {
        endpoint: string;
        requests: number;
      }[];
      expect(endpoints.find((e) => e.endpoint === 'GET /a')?.requests).toBe(9);
    }
    // The key never left a worker: entries that crossed the hub are redacted too.
    const { body } = await call(b, 'GET', '/__mockapi/requests?limit=1');
    expect(body.requests[0].headers['x-api-key']).toBe('<redacted>');
    expect(body.requests[0].credential).toEqual({ via: 'x-api-key', key: 'current' });
  });

  it('numbers the entries in the order their answers were given, whichever worker gave them (200 alternating requests)', async () => {
    // A worker used to journal an answer after writing it: the client could read it and send its
    // next request to the other worker, whose entry then reached the primary (which numbers them) first.
    await fresh();
    const [a, b] = own as [string, string];
    const sent: string[] = [];
    for (let i = 0; i < 200; i++) {
      const [target, name] = i % 2 === 0 ? [a, 'a'] : [b, 'b'];
      sent.push(`${name}${i}`);
      await call(target, 'GET', `/mock/a?from=${name}${i}`, { headers: { 'x-api-key': KEY } }); // 200 or 429: both journaled
    }
    const { body } = await call(a, 'GET', '/__mockapi/requests?path=/mock/a');
    expect(body.requests.map((r: { query: { from: string } }) => r.query.from)).toEqual(sent);
  });

  it('requests/wait answers when the requests arrive at another worker', async () => {
    const [a, b] = own as [string, string];
    for (let round = 0; round < 5; round++) {
      await fresh();
      const since = ((await call(a, 'GET', '/__mockapi/requests')).body.requests as { id: number }[]).at(-1)?.id ?? 0;
      const waiting = call(a, 'GET', `/__mockapi/requests/wait?path=/mock/a&count=2&timeout=20s&since=${since}`);
      // The wait is registered on worker a once its own count call answers after it (one connection each, in order).
      await waitFor(async () => (await call(a, 'GET', '/__mockapi/requests/count')).status === 200);
      expect((await mockCall(b, '/a')).status).toBe(200);
      expect((await mockCall(b, '/a')).status).toBe(200);
      const { status, body } = await waiting;
      expect(status).toBe(200);
      expect(body.requests).toHaveLength(2);
      expect(body.requests.every((r: { id: number }) => r.id > since)).toBe(true);
    }
  });

  it('events on one worker carry the requests of the other', async () => {
    const [a, b] = own as [string, string];
    const controller = new AbortController();
    const res = await fetch(`${a}/__mockapi/events`, { signal: controller.signal });
    const reader = res.body!.getReader();
    let text = '';
    const seen = (async () => {
      while (!text.includes('"path":"/mock/a"')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
        // Keep asking worker b until a's stream shows its request: subscribing is not observable from outside.
      }
    })();
    const sender = (async () => {
      while (!text.includes('"path":"/mock/a"')) await mockCall(b, '/a');
    })();
    await seen;
    await sender;
    controller.abort();
    expect(text).toMatch(/event: request\ndata: \{"id":\d+,/);
  });

  it('reset, DELETE and scenario PUT reach every worker before they answer', async () => {
    const [a, b] = own as [string, string];
    for (let round = 0; round < 3; round++) {
      await fresh();
      // Scenario: set through a, seen at once by b (its state and its answers).
      expect(await call(a, 'PUT', '/__mockapi/scenarios/cart', { body: { state: 'full' } })).toEqual({
        status: 200,
        body: { cart: 'full' },
      });
      expect((await call(b, 'GET', '/__mockapi/scenarios')).body).toEqual({ cart: 'full' });
      expect((await mockCall(b, '/cart')).body).toEqual({ cart: 'full' });
      expect((await call(a, 'PUT', '/__mockapi/scenarios/nope', { body: { state: 'x' } })).status).toBe(404);

      // Sequences advance on b; a reset through a restarts them on b.
      expect((await mockCall(b, '/seq')).body).toEqual({ n: 1 });
      expect((await mockCall(b, '/seq')).body).toEqual({ n: 2 });
      // The shared rate window (10 per hour, in Redis) is spent.
      for (let i = 0; i < 4; i++) for (const url of [a, b]) await mockCall(url, '/a');
      expect((await mockCall(a, '/a')).status).toBe(429);
      expect((await mockCall(b, '/a')).status).toBe(429);
      const reset = await call(a, 'POST', '/__mockapi/reset', { body: {} });
      expect(reset.status).toBe(200);
      expect(reset.body.scenarios).toEqual({ cart: 'empty' });
      expect((await call(b, 'GET', '/__mockapi/scenarios')).body).toEqual({ cart: 'empty' });
      expect((await call(b, 'GET', '/__mockapi/requests')).body).toEqual({ requests: [] });
      expect((await mockCall(b, '/seq')).body).toEqual({ n: 1 });
      expect((await mockCall(b, '/cart')).body).toEqual({ cart: 'empty' });
      expect((await mockCall(a, '/a')).status).toBe(200);

      // DELETE through b empties a's view too.
      expect((await call(a, 'GET', '/__mockapi/requests/count')).body.count).toBeGreaterThan(0);
      expect(await call(b, 'DELETE', '/__mockapi/requests', { body: {} })).toEqual({
        status: 200,
        body: { requests: [] },
      });
      expect((await call(a, 'GET', '/__mockapi/requests')).body).toEqual({ requests: [] });
      const endpoints = (await call(a, 'GET', '/__mockapi/endpoints')).body.endpoints as { requests: number }[];
      expect(endpoints.map((e) => e.requests)).toEqual([0, 0, 0]);
    }
  });
});

it('refuses --clock with --workers (exit 2, says why)', async () => {
  const file = await writeConfig(dir.path, CONFIG.replace(/limits:\n.*\n/, ''), 'clock.yaml');
  const result = await runCli([
    'serve',
    '-c',
    file,
    '--port',
    '0',
    '--workers',
    '2',
    '--clock',
    '2026-01-01T00:00:00Z',
  ]);
  expect(result.code).toBe(2);
  expect(result.stderr).toBe(
    'mockapi: --clock cannot be combined with --workers: a virtual clock belongs to one process; run one process to move time\n',
  );
});
