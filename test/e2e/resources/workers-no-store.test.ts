// `serve --workers 2` with resources and no store: the workers share one set of objects and
// idempotency keys, the primary's, over the cluster IPC channel. Creates spread over the workers
// (a new connection each) are each retrievable and listed once; a key sent again to another worker
// is replayed; an action's `when` and a lifecycle move are decided once (one history entry, one
// event); a reset and the admin API reach every worker; `resources.persist` is written at stop and
// read at start.
import { readFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { startServe, stopAll, tempDir, waitFor, writeConfig, type ServeProcess } from '../../helpers/cli.js';
import { workerUrls } from '../../helpers/workers.js';
import { workersConfig } from './helpers.js';

afterAll(stopAll);

const KEY = 'sk_test_resourcesNoStore00000000000001';
const CONFIG = workersConfig(KEY);

let serve: ServeProcess | undefined;
afterEach(async () => {
  await serve?.stop('SIGTERM');
  serve = undefined;
});

/** `serve --workers 2` without a store; resolves with the shared URL and each worker's own. */
async function start(dir: string, config: string): Promise<{ url: string; own: [string, string] }> {
  const file = await writeConfig(dir, config);
  serve = await startServe(['-c', file, '--workers', '2', '--no-state', '--log', 'off'], { cwd: dir });
  const own = await waitFor(async () => {
    const urls = await workerUrls(dir);
    return urls.length === 2 ? urls : undefined;
  });
  return { url: serve.url, own: own as [string, string] };
}

interface Answer {
  status: number;
  replayed: string | undefined;
  json: any;
}

/** One request on a connection of its own (node:cluster hands each to the next worker). */
function send(base: string, method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  return new Promise<Answer>((done, fail) => {
    const req = request(
      `${base}${path}`,
      {
        method,
        agent: false,
        headers: {
          authorization: `Bearer ${KEY}`,
          ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () =>
          done({
            status: res.statusCode ?? 0,
            replayed: res.headers['idempotent-replayed'] as string | undefined,
            json: text === '' ? undefined : JSON.parse(text),
          }),
        );
      },
    );
    req.on('error', fail).end(body);
  });
}

// (the admin API's writes take JSON only)
const JSON_TYPE = { 'content-type': 'application/json' };

const ids = async (base: string, path = '/v1/customers?limit=100'): Promise<string[]> =>
  (await send(base, 'GET', path)).json.data.map((c: { id: string }) => c.id);

describe('resources with serve --workers and no store', () => {
  test('objects created on every worker are each retrievable and listed once; a key is replayed across workers', async () => {
    const dir = await tempDir();
    const { url, own } = await start(dir, CONFIG);
    const made = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => (await send(url, 'POST', '/v1/customers', `email=c${i}%40x.io`)).json),
    );
    const created = made.map((c: { id: string }) => c.id);
    expect(new Set(created).size).toBe(40);
    for (const base of own)
      for (const customer of made)
        expect((await send(base, 'GET', `/v1/customers/${customer.id}`)).json).toEqual(customer);
    const expected = [...created, 'cus_seed'].sort();
    for (let i = 0; i < 6; i++) {
      const listed = await ids(i < 2 ? own[i]! : url);
      expect(listed.length).toBe(41);
      expect([...listed].sort()).toEqual(expected);
    }
    // A filter (applied in the worker, over the primary's candidates) and cursors
    expect((await send(url, 'GET', '/v1/customers?email=c7%40x.io')).json.data).toEqual([made[7]]);
    const paged: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = (
        await send(url, 'GET', `/v1/customers?limit=7${after === undefined ? '' : `&starting_after=${after}`}`)
      ).json;
      paged.push(...page.data.map((c: { id: string }) => c.id));
      if (!page.has_more) break;
      after = paged[paged.length - 1];
    }
    expect([...paged].sort()).toEqual(expected);

    const key = { 'idempotency-key': 'k-across' };
    const first = await send(own[0], 'POST', '/v1/customers', 'email=k%40x.io', key);
    expect(first.status).toBe(200);
    const again = await Promise.all([
      send(own[1], 'POST', '/v1/customers', 'email=k%40x.io', key),
      ...Array.from({ length: 5 }, () => send(url, 'POST', '/v1/customers', 'email=k%40x.io', key)),
    ]);
    for (const answer of again) expect([answer.replayed, answer.json]).toEqual(['true', first.json]);
    expect((await ids(url)).length).toBe(42);
  });

  test("an action's when and a lifecycle move are each taken once (one history entry, one event)", async () => {
    const events: Array<{ type: string; id: string }> = [];
    const hooks: Server = createServer((req, res) => {
      let text = '';
      req.on('data', (d: Buffer) => (text += d.toString()));
      req.on('end', () => {
        const event = JSON.parse(text) as { type: string; data: { object: { id: string } } };
        events.push({ type: event.type, id: event.data.object.id });
        res.end('ok');
      });
    });
    await new Promise<void>((done) => hooks.listen(0, '127.0.0.1', done));
    try {
      const dir = await tempDir();
      const { url, own } = await start(
        dir,
        `${CONFIG}webhooks:
  targets:
    app: { url: "http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks" }
`.replace(
          'resources:\n',
          `resources:
  payment_intents:
    style: stripe
    path: /payment_intents
    fields: { object: payment_intent, status: requires_confirmation }
    actions:
      confirm: { set: { status: processing }, when: { status: requires_confirmation } }
    lifecycle:
      - { from: processing, after: 1s, to: succeeded, send: [payment_intent.succeeded] }
`,
        ),
      );
      const [a, b] = [
        (await send(url, 'POST', '/v1/payment_intents', '')).json.id as string,
        (await send(url, 'POST', '/v1/payment_intents', '')).json.id as string,
      ];
      // Confirmed at once on many connections (both workers): one is taken, the others are refused by its `when`.
      const confirms = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          send(i < 2 ? own[i]! : url, 'POST', `/v1/payment_intents/${a}/confirm`, ''),
        ),
      );
      expect(confirms.map((c) => c.status).sort()).toEqual([200, 400, 400, 400, 400, 400, 400, 400]);
      // Reads on every worker while the move comes due: each may take it, one does.
      await waitFor(async () => {
        const seen = await Promise.all(own.map((base) => send(base, 'GET', `/v1/payment_intents/${a}`)));
        return seen.every((s) => s.json.status === 'succeeded');
      }, 15_000);
      // The second intent's move, due later: by the time its event came, a second event of the first would have too.
      expect((await send(url, 'POST', `/v1/payment_intents/${b}/confirm`, '')).status).toBe(200);
      await waitFor(() => events.some((e) => e.id === b), 15_000);
      expect(events.filter((e) => e.id === a)).toEqual([{ type: 'payment_intent.succeeded', id: a }]);
      const listed = (await send(own[1], 'GET', '/__mockapi/resources/payment_intents?history=true')).json;
      const kinds = (listed.history[a] as Array<{ kind: string }>).map((h) => h.kind);
      expect(kinds).toEqual(['created', 'action', 'lifecycle']);
    } finally {
      await new Promise((done) => hooks.close(done));
    }
  });

  test('a reset empties the collections for every worker; the admin API writes for every worker', async () => {
    const dir = await tempDir();
    const { url, own } = await start(dir, CONFIG);
    for (let i = 0; i < 6; i++)
      await send(url, 'POST', '/v1/customers', `email=r${i}%40x.io`, { 'idempotency-key': `r${i}` });
    expect((await ids(own[1])).length).toBe(7);
    const reset = await send(own[0], 'POST', '/__mockapi/reset', '{"resources":true}', {
      'content-type': 'application/json',
    });
    expect(reset.status).toBe(200);
    for (const base of [...own, url, url]) expect(await ids(base)).toEqual(['cus_seed']);
    expect(
      (await send(own[1], 'POST', '/v1/customers', 'email=r0%40x.io', { 'idempotency-key': 'r0' })).replayed,
    ).toBeUndefined();

    const added = await send(own[0], 'POST', '/__mockapi/resources/customers', '{"id":"cus_admin","email":"a@x.io"}', {
      'content-type': 'application/json',
    });
    expect(added.status).toBe(200);
    for (const base of [own[1], url, url, url]) {
      expect((await send(base, 'GET', '/v1/customers/cus_admin')).json).toEqual(added.json);
      const contents = (await send(base, 'GET', '/__mockapi/resources/customers')).json;
      expect(contents.objects.filter((o: { id: string }) => o.id === 'cus_admin')).toEqual([added.json]);
    }
    expect((await send(own[1], 'DELETE', '/__mockapi/resources/customers', undefined, JSON_TYPE)).status).toBe(200);
    for (const base of [...own, url]) expect(await ids(base)).toEqual([]);
  });

  test('resources.persist: the primary writes the objects at stop and reads them at start', async () => {
    const dir = await tempDir();
    const config = CONFIG.replace('resources:\n', 'resources:\n  persist: true\n');
    const { url } = await start(dir, config);
    const made = await Promise.all(
      Array.from(
        { length: 6 },
        async (_, i) => (await send(url, 'POST', '/v1/customers', `email=p${i}%40x.io`)).json.id,
      ),
    );
    expect(await serve!.stop('SIGTERM')).toBe(0);
    serve = undefined;
    const file = JSON.parse(await readFile(join(dir, '.mockapi', 'resources.json'), 'utf8'));
    expect(file.collections.customers.objects.map((o: { id: string }) => o.id).sort()).toEqual(
      [...made, 'cus_seed'].sort(),
    );
    const again = await start(dir, config);
    for (const base of again.own) expect((await ids(base)).sort()).toEqual([...made, 'cus_seed'].sort());
  });
});
