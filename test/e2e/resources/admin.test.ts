// The admin API and the programmatic calls of resources on a real server (port 0): the collections,
// objects added, replaced and emptied without an API call, history, reset back to the seed, hot
// reload keeping the objects, persist across restarts with a corrupt file set aside.
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { connectMockServer } from '../../../src/client.js';
import { startMockServer, type MockServer } from '../../../src/index.js';
import { tempDir } from '../../helpers/cli.js';

const CONFIG = `apiKey: mk_resourcesAdmin000000000000000001
seed: 3
resources:
  customers:
    style: stripe
    path: /v1/customers
    fields: { object: customer, email: null, metadata: {} }
    seed:
      - { id: cus_demo, email: ada@example.com }
`;

const open: MockServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function start(dir: string, text = CONFIG): Promise<MockServer> {
  const file = join(dir, 'mockapi.yaml');
  await writeFile(file, text);
  const server = await startMockServer({ config: file, port: 0 });
  open.push(server);
  return server;
}

async function admin(
  server: MockServer,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: any }> {
  const res = await fetch(`${server.url}/__mockapi/${path}`, {
    method,
    headers: method === 'GET' ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

describe('resources admin API and calls', () => {
  test('list, add, get, replace, empty, history, reset back to the seed', async () => {
    const dir = await tempDir('mockapi-res-');
    const server = await start(dir);
    expect(await admin(server, 'GET', 'resources')).toEqual({
      status: 200,
      json: { resources: [{ name: 'customers', style: 'stripe', path: '/v1/customers', count: 1 }] },
    });
    const added = await admin(server, 'POST', 'resources/customers', { email: 'grace@example.com' });
    expect(added.status).toBe(200);
    expect(added.json).toMatchObject({ object: 'customer', email: 'grace@example.com', metadata: {} });
    expect(added.json.id).toMatch(/^cus_[0-9A-Za-z]{14}$/);
    expect((await admin(server, 'POST', 'resources/customers', { id: 'cus_demo' })).status).toBe(409);
    expect((await admin(server, 'GET', `resources/customers/${added.json.id}`)).json).toEqual(added.json);
    expect((await admin(server, 'GET', 'resources/customers?email=ada%40example.com')).json.objects).toEqual([
      { id: 'cus_demo', object: 'customer', email: 'ada@example.com', metadata: {} },
    ]);
    const history = (await admin(server, 'GET', 'resources/customers?history=true')).json.history;
    expect(history.cus_demo).toEqual([{ at: expect.any(Number), kind: 'seeded' }]);
    expect(history[added.json.id]).toEqual([{ at: expect.any(Number), kind: 'admin' }]);
    expect((await admin(server, 'GET', 'resources/nope')).json).toEqual({
      error: 'not_found',
      message: 'no resource named "nope" in the config (resources: customers)',
    });
    expect((await admin(server, 'POST', 'resources/customers', { __proto__: { x: 1 } })).status).toBe(200); // JSON.stringify drops it
    const proto = await fetch(`${server.url}/__mockapi/resources/customers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"__proto__":{"polluted":1}}',
    });
    expect(proto.status).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();

    const replaced = await admin(server, 'PUT', 'resources/customers', [
      { id: 'cus_1', email: 'a@x' },
      { email: 'b@x' },
    ]);
    expect(replaced.json.objects.map((c: { id: string }) => c.id)[0]).toBe('cus_1');
    expect(replaced.json.objects).toHaveLength(2);
    expect((await admin(server, 'PUT', 'resources/customers', { not: 'a list' })).status).toBe(400);
    const noId = { error: 'bad_request', message: 'the id must not be empty' };
    expect(await admin(server, 'POST', 'resources/customers', { id: '', email: 'c@x' })).toEqual({
      status: 400,
      json: noId,
    });
    expect(await admin(server, 'PUT', 'resources/customers', [{ id: 'cus_2' }, { id: '' }])).toEqual({
      status: 400,
      json: noId,
    });
    expect((await server.resources.customers!.list()).map((c) => c.id)).toEqual(['cus_1', replaced.json.objects[1].id]);
    expect((await admin(server, 'DELETE', 'resources/customers')).json.objects).toEqual([]);
    expect(await server.resources.customers!.list()).toEqual([]);

    const reset = await admin(server, 'POST', 'reset', { resources: true, journal: false });
    expect(reset.status).toBe(200);
    expect(reset.json.reset).toContain('resources');
    expect((await server.resources.customers!.list()).map((c) => c.id)).toEqual(['cus_demo']);
  });

  test('server.resources and connectMockServer(url).resources: create, get, list with a filter, replace, clear', async () => {
    const dir = await tempDir('mockapi-res-');
    const server = await start(dir);
    const customers = server.resources.customers!;
    const made = await customers.create({ email: 'lin@example.com', metadata: { plan: 'pro' } });
    expect(await customers.get(made.id as string)).toEqual(made);
    await expect(customers.get('cus_missing')).rejects.toMatchObject({ status: 404 });
    const client = connectMockServer(server.url).resources.customers!;
    expect((await client.list({ email: 'lin@example.com' })).map((c) => c.id)).toEqual([made.id]);
    expect(await client.get(made.id as string)).toEqual(made);
    await client.create({ id: 'cus_remote' });
    expect((await customers.list()).map((c) => c.id)).toEqual(['cus_demo', made.id, 'cus_remote']);
    await client.replace([{ id: 'cus_only' }]);
    expect((await server.resourceCollections())[0]?.count).toBe(1);
    await client.clear();
    expect(await customers.list()).toEqual([]);
    await expect(connectMockServer(server.url).resources.nope!.list()).rejects.toMatchObject({ status: 404 });
  });

  test('a hot reload keeps the objects (a changed `fields` does not rewrite them); persist writes and reads .mockapi/resources.json', async () => {
    const dir = await tempDir('mockapi-res-');
    const text = CONFIG.replace('resources:\n', 'resources:\n  persist: true\n');
    const server = await start(dir, text);
    const made = await server.resources.customers!.create({ email: 'kept@example.com' });
    await writeFile(join(dir, 'mockapi.yaml'), text.replace('email: null', 'email: null, currency: eur'));
    expect((await server.reload()).changed).toBe(true);
    expect(await server.resources.customers!.get(made.id as string)).toEqual(made);
    expect(await server.resources.customers!.create({})).toMatchObject({ currency: 'eur' });
    await server.close();
    open.length = 0;
    const saved = JSON.parse(await readFile(join(dir, '.mockapi', 'resources.json'), 'utf8'));
    expect(saved.collections.customers.objects.map((o: { id: string }) => o.id)).toContain(made.id);

    const again = await start(dir, text);
    expect(await again.resources.customers!.get(made.id as string)).toEqual(made);
    expect((await again.resources.customers!.list()).length).toBe(3); // the seed is not added twice
    await again.close();
    open.length = 0;

    await writeFile(
      join(dir, '.mockapi', 'resources.json'),
      '{"version":1,"collections":{"customers":{"objects":[{"id":1}]}}}',
    );
    const messages: string[] = [];
    const file = join(dir, 'mockapi.yaml');
    const third = await startMockServer({
      config: file,
      port: 0,
      logger: { info: () => {}, warn: (m: string) => messages.push(m), error: () => {} } as never,
    });
    open.push(third);
    expect(messages.join('\n')).toMatch(/resources\.json is corrupt .*moved it to .*resources\.json\.corrupt-/);
    expect((await third.resources.customers!.list()).map((c) => c.id)).toEqual(['cus_demo']);
    expect((await readdir(join(dir, '.mockapi'))).some((name) => name.startsWith('resources.json.corrupt-'))).toBe(
      true,
    );
  });
});
