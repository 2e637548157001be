// `serve --workers 2 --store redis://…` with resources: each worker's own port sees what the other
// created, an idempotent retry on the other worker is replayed, a reset reaches both (without a
// store: workers-no-store.test.ts).
import { afterAll, describe, expect, test } from 'vitest';
import { startServe, stopAll, tempDir, writeConfig } from '../../helpers/cli.js';
import { startRedis } from '../../helpers/redis.js';
import { startWorkersServe } from '../../helpers/workers-serve.js';
import { workersConfig } from './helpers.js';

afterAll(stopAll);

const KEY = 'sk_test_resourcesWorkers0000000000001';
const CONFIG = workersConfig(KEY);

describe('resources with serve --workers', () => {
  test("two workers, one store: each sees the other's objects; a key sent again to the other worker is replayed; reset reaches both", async () => {
    const dir = await tempDir();
    const workers = await startWorkersServe(dir, CONFIG);
    try {
      const [a, b] = workers.own as [string, string];
      const call = async (base: string, method: string, path: string, body?: string, key?: string) => {
        const res = await fetch(`${base}/v1${path}`, {
          method,
          headers: {
            authorization: `Bearer ${KEY}`,
            'content-type': 'application/x-www-form-urlencoded',
            ...(key === undefined ? {} : { 'idempotency-key': key }),
          },
          body,
        });
        return {
          status: res.status,
          replayed: res.headers.get('idempotent-replayed'),
          json: (await res.json()) as Record<string, any>,
        };
      };
      const made = await call(a, 'POST', '/customers', 'email=a%40x.io', 'k-1');
      expect(made.status).toBe(200);
      expect((await call(b, 'GET', `/customers/${made.json.id}`)).json).toEqual(made.json);
      const again = await call(b, 'POST', '/customers', 'email=a%40x.io', 'k-1');
      expect([again.replayed, again.json]).toEqual(['true', made.json]);
      expect((await call(b, 'GET', '/customers?limit=100')).json.data.map((c: { id: string }) => c.id)).toEqual([
        made.json.id,
        'cus_seed',
      ]);
      const reset = await fetch(`${a}/__mockapi/reset`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"resources":true}',
      });
      expect(reset.status).toBe(200);
      expect((await call(b, 'GET', '/customers?limit=100')).json.data.map((c: { id: string }) => c.id)).toEqual([
        'cus_seed',
      ]);
      expect((await call(b, 'POST', '/customers', 'email=a%40x.io', 'k-1')).replayed).toBeNull(); // the keys were forgotten
    } finally {
      await workers.stop();
    }
  });

  test('a store that goes away: 503 store_unavailable, and answers again once it is back', async () => {
    const redis = await startRedis();
    try {
      const dir = await tempDir();
      const file = await writeConfig(dir, CONFIG);
      const server = await startServe(['-c', file, '--store', redis.url, '--no-state'], { cwd: dir });
      const get = async () => {
        const res = await fetch(`${server.url}/v1/customers/cus_seed`, { headers: { authorization: `Bearer ${KEY}` } });
        return { status: res.status, json: (await res.json()) as Record<string, any> };
      };
      expect((await get()).status).toBe(200);
      await redis.kill();
      const down = await get();
      expect(down.status).toBe(503);
      expect(down.json.error).toBe('store_unavailable');
      await redis.restart();
      // An empty Redis after the restart: the collection is seeded again on first use.
      const back = await (async () => {
        for (let i = 0; i < 100; i++) {
          const answer = await get();
          if (answer.status !== 503) return answer;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        return get();
      })();
      expect(back).toEqual({ status: 200, json: { id: 'cus_seed', object: 'customer', email: null } });
    } finally {
      await redis.stop();
    }
  });
});
