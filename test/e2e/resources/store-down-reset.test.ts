// `POST /__mockapi/reset` with resources in a shared store that cannot be reached: a 503
// `store_unavailable` with nothing reset (the clock included), as docs/admin-api.md says; moving the
// virtual clock meanwhile does not end the server; once Redis is back the same reset does it all.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServe, stopAll, tempDir, waitFor, writeConfig, type ServeProcess } from '../../helpers/cli.js';
import { startRedis, type RedisServer } from '../../helpers/redis.js';

const KEY = 'sk_test_resourcesStoreDown00000000001';
const START = '2020-01-01T00:00:00.000Z';

let redis: RedisServer;
let server: ServeProcess;
beforeAll(async () => {
  redis = await startRedis();
  const dir = await tempDir();
  const config = await writeConfig(
    dir,
    `apiKey: ${KEY}
auth: { accept: [bearer] }
limits: { store: ${redis.url} }
resources:
  customers:
    style: stripe
    path: /v1/customers
    seed:
      - { id: cus_seed }
`,
  );
  server = await startServe(['-c', config, '--no-state', '--no-watch', '--log', 'off', '--clock', START]);
});
afterAll(async () => {
  await stopAll();
  await redis?.stop();
});

async function admin(path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${server.url}/__mockapi/${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function customerIds(): Promise<string[]> {
  const res = await fetch(`${server.mock}/v1/customers`, { headers: { authorization: `Bearer ${KEY}` } });
  return ((await res.json()) as { data: { id: string }[] }).data.map((c) => c.id);
}

describe('reset while the resource store is down', () => {
  test('answers 503 store_unavailable having reset nothing; the clock moves without ending the server', async () => {
    const made = await fetch(`${server.mock}/v1/customers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(made.status).toBe(200);
    expect((await admin('clock', { advance: '1h' })).status).toBe(200);
    await redis.kill();

    for (const parts of [{}, { usage: false, rateLimit: false }]) {
      const reset = await admin('reset', parts);
      expect(reset.status, JSON.stringify(reset.json)).toBe(503);
      expect(Object.keys(reset.json)).toEqual(['error', 'message']);
      expect(reset.json.error).toBe('store_unavailable');
      expect(reset.json.message).toMatch(/nothing else was; repeat the call once it is back$/);
      // Nothing reset: the clock still an hour on (it was not put back to its start).
      const now = (await admin('clock')).json.now as string;
      expect(Date.parse(now) - Date.parse(START)).toBeGreaterThanOrEqual(3_600_000);
    }

    // A clock move asks the store for the lifecycle moves it passed: a warning, not the end of the server.
    expect((await admin('clock', { advance: '1h' })).status).toBe(200);
    await server.waitForOutput(/resources: a lifecycle move failed: the resource store failed/);
    expect((await admin('clock')).status).toBe(200);
    expect(server.child.exitCode).toBeNull();

    await redis.restart();
    await waitFor(async () => (await admin('reset', {})).status === 200, 15_000, 100);
    expect((await admin('clock')).json.now).toMatch(/^2020-01-01T00:00:0/);
    expect(await customerIds()).toEqual(['cus_seed']); // Redis came back empty: the reset seeded it again
  });
});
