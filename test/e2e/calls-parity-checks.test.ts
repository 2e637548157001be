// The object of startMockServer refuses what the admin API refuses, with the same status, code and
// words as connectMockServer(url) gets over HTTP: a scenario name the URL resolves away (405), a
// stub over server.maxBodySize (413), and the resources calls' bodies, filters and names.
import { describe, expect, test } from 'vitest';
import { startMockServer, type MockServer } from '../../src/mock-server.js';
import { connectMockServer } from '../../src/connect.js';
import { ControlError } from '../../src/control/control-error.js';
import { useTempDir, writeConfig } from '../helpers/cli.js';
import { admin } from '../helpers/control.js';

const KEY = 'mk_parityChecks0000000000000000001';
const dir = useTempDir('mockapi-parity-checks-');

/** What a call settles with, as a plain record: the refusal (class name, status, code, words) or `resolved`. */
async function outcome(call: () => Promise<unknown>): Promise<Record<string, unknown>> {
  const err = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err === undefined) return { resolved: true };
  expect(err, String(err)).toBeInstanceOf(ControlError);
  const { name, status, code, message } = err as ControlError;
  return { name, status, code, message };
}

/** Each call over HTTP and in process: the same refusal, of `status`. */
async function sameRefusals<C>(client: C, server: C, calls: ((c: C) => Promise<unknown>)[], status?: number) {
  for (const call of calls) {
    const overHttp = await outcome(() => call(client));
    if (status !== undefined) expect(overHttp.status, String(call)).toBe(status);
    expect(await outcome(() => call(server)), String(call)).toEqual(overHttp);
  }
}

describe('scenarios.set', () => {
  test('a name the URL resolves away is the admin API 405 in process too, and moves nothing', async () => {
    const yaml = `apiKey: ${KEY}\nscenarios:\n  mode: { initial: ok }\nendpoints:\n  - method: GET\n    path: /a\n    response: { status: 200 }\n`;
    const server = await startMockServer({ config: await writeConfig(dir.path, yaml), port: 0, state: false });
    try {
      const client = connectMockServer(server.url);
      type C = Pick<MockServer, 'scenarios'>;
      await sameRefusals<C>(
        client,
        server,
        [(c) => c.scenarios.set('', 'down'), (c) => c.scenarios.set('.', 'down'), (c) => c.scenarios.set('..', 'down')],
        405,
      );
      expect(await outcome(() => server.scenarios.set('', 'down'))).toEqual({
        name: 'ControlError',
        status: 405,
        code: 'method_not_allowed',
        message: '/__mockapi/scenarios/ takes GET',
      });
      // An unknown name is still the 404 of both.
      await sameRefusals<C>(client, server, [(c) => c.scenarios.set('nope', 'down')], 404);
      expect(await server.scenarios.get()).toEqual({ mode: 'ok' });
    } finally {
      await server.close();
    }
  });
});

describe('stub', () => {
  test('a stub over server.maxBodySize is the admin API 413 in process too, and adds nothing', async () => {
    const yaml = `apiKey: ${KEY}\nserver: { maxBodySize: 2kb }\nendpoints:\n  - method: GET\n    path: /a\n    response: { status: 200 }\n`;
    const server = await startMockServer({ config: await writeConfig(dir.path, yaml), port: 0, state: false });
    try {
      const client = connectMockServer(server.url);
      type C = Pick<MockServer, 'stub'>;
      const big = (text: string) => (c: C) =>
        c.stub({ method: 'GET', path: '/big', response: { status: 200, body: { text } } });
      // Measured as the JSON sent: 3000 characters of one byte, and 1000 of three bytes (€ is 3 bytes in UTF-8).
      await sameRefusals<C>(client, server, [big('x'.repeat(3000)), big('€'.repeat(1000))], 413);
      expect(await outcome(() => big('x'.repeat(3000))(server))).toEqual({
        name: 'ControlError',
        status: 413,
        code: 'payload_too_large',
        message: 'a stub is at most 2048 bytes (server.maxBodySize)',
      });
      expect(await server.stubs()).toEqual([]);
      // Under the limit, it is added.
      await server.stub({ method: 'GET', path: '/small', response: { status: 200, body: { text: 'x'.repeat(1500) } } });
      expect(await server.stubs()).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});

describe('resources', () => {
  test('a wrong body, filter or name is the admin API refusal in process too, and writes nothing', async () => {
    const server = await startMockServer({
      port: 0,
      state: false,
      config: {
        apiKey: KEY,
        resources: {
          customers: {
            style: 'stripe',
            path: '/v1/customers',
            fields: { object: 'customer', email: null, metadata: {} },
            seed: [{ id: 'cus_a', email: 'a@example.com', metadata: { plan: 'pro' } }],
          },
        },
      },
    });
    try {
      const client = connectMockServer(server.url);
      type C = Pick<MockServer, 'resources' | 'resourceCollections'>;
      let deep: Record<string, unknown> = { leaf: 1 };
      for (let i = 0; i < 40; i++) deep = { deep };
      /* eslint-disable @typescript-eslint/no-explicit-any -- wrong on purpose, as a JS caller may */
      await sameRefusals<C>(
        client,
        server,
        [
          (c) => c.resources.customers!.create(JSON.parse('{"__proto__": {"x": 1}}')),
          (c) => c.resources.customers!.create({ metadata: JSON.parse('{"constructor": {"prototype": 1}}') }),
          (c) => c.resources.customers!.create({ metadata: deep }),
          (c) => c.resources.customers!.create('text' as any),
          (c) => c.resources.customers!.create([] as any),
          (c) => c.resources.customers!.create((() => 1) as any),
          (c) => c.resources.customers!.replace([{ id: 'cus_x' }, { id: 'cus_x' }]),
          (c) => c.resources.customers!.replace([{ id: '' }]),
          (c) => c.resources.customers!.replace({ id: 'cus_x' } as any),
          (c) => c.resources.customers!.replace([JSON.parse('{"__proto__": {}}')]),
        ],
        400,
      );
      await sameRefusals<C>(
        client,
        server,
        [
          (c) => c.resources.nope!.list(),
          (c) => c.resources.nope!.get('cus_a'),
          (c) => c.resources.nope!.create({}),
          (c) => c.resources.nope!.replace([]),
          (c) => c.resources.nope!.clear(),
          (c) => c.resources.customers!.get('cus_none'),
          (c) => c.resources.customers!.get(404 as any),
        ],
        404,
      );
      await sameRefusals<C>(client, server, [(c) => c.resources.customers!.create({ id: 'cus_a' })], 409);
      /* eslint-enable @typescript-eslint/no-explicit-any */
      // Nothing was written: the seed alone.
      expect((await server.resources.customers!.list()).map((c) => c.id)).toEqual(['cus_a']);
      // A filter is read from the query it makes: brackets reach nested fields, as over HTTP.
      const filters: Record<string, string>[] = [
        { 'metadata[plan]': 'pro' },
        { 'metadata[plan]': 'free' },
        { email: 'a@example.com' },
      ];
      for (const filter of filters) {
        const overHttp = await client.resources.customers!.list(filter);
        expect(await server.resources.customers!.list(filter), JSON.stringify(filter)).toEqual(overHttp);
      }
      expect(await server.resources.customers!.list({ 'metadata[plan]': 'pro' })).toHaveLength(1);
      // A created object is the same either way (an undefined field left out, as JSON leaves it).
      const made = await server.resources.customers!.create({ id: 'cus_b', email: undefined, metadata: { n: 1 } });
      expect(made).toEqual(await client.resources.customers!.get('cus_b'));
      expect(made).toMatchObject({ email: null });
      // A body over 64 MiB of JSON: the route reads it to its end, then 413 (sent raw here: a client
      // that builds and sends 64 MiB may take longer than connectMockServer waits on a loaded machine).
      const huge = `[{"note":"${'x'.repeat(64 * 1024 * 1024)}"}]`;
      const overHttp = await admin(server.url, 'PUT', 'resources/customers', huge);
      const inProcess = await outcome(() => server.resources.customers!.replace(JSON.parse(huge)));
      expect({ status: inProcess.status, code: inProcess.code, message: inProcess.message }).toEqual({
        status: overHttp.status,
        code: overHttp.body.error,
        message: overHttp.body.message,
      });
      expect(overHttp).toMatchObject({ status: 413, body: { error: 'payload_too_large' } });
      expect(await server.resources.customers!.list()).toHaveLength(2);
    } finally {
      await server.close();
    }
  });
});
