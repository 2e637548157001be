// The object of startMockServer refuses what the admin API refuses, with the same status, code and
// words as connectMockServer(url) gets over HTTP: a scenario name the URL resolves away (405), a
// stub over server.maxBodySize (413).
import { describe, expect, test } from 'vitest';
import { startMockServer, type MockServer } from '../../src/mock-server.js';
import { connectMockServer } from '../../src/connect.js';
import { ControlError } from '../../src/control/control-error.js';
import { useTempDir, writeConfig } from '../helpers/cli.js';

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
