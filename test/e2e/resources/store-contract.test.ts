// One contract, two stores: the in-memory store and the Redis store (a redis-server of the test's
// own) give the same answers to the same operations — CRUD, pages and cursors, GitHub's snapshot
// pages, the lifecycle, idempotency keys, clear — and two engines on one Redis see one collection.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MemoryResourceStore } from '../../../src/resources/memory-store.js';
import { openResourceStore } from '../../../src/resources/redis-store.js';
import type { ResourceStore } from '../../../src/resources/store.js';
import { startRedis, type RedisServer } from '../../helpers/redis.js';
import { testEngine } from './helpers.js';
import { CONFIG, createsAtOnce, pageDeleting, story } from './store-story.js';

let redis: RedisServer;
const opened: ResourceStore[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  await redis?.stop();
});

let projects = 0;
async function redisStore(project = `contract${++projects}`): Promise<ResourceStore> {
  const store = await openResourceStore(redis.url, project);
  opened.push(store);
  return store;
}

describe('resource stores', () => {
  test('memory and Redis answer the same story the same way', async () => {
    const memory = await story(new MemoryResourceStore());
    const shared = await story(await redisStore());
    expect(shared).toEqual(memory);
    expect(JSON.stringify(memory)).toContain('"has_more":true');
  });

  test('memory and Redis: a list paged while each page is deleted goes on from the deleted cursor (stripe-node autopaging)', async () => {
    for (const store of [new MemoryResourceStore(), await redisStore()]) {
      const t = await testEngine(CONFIG, { store });
      for (let i = 0; i < 24; i++) await t.call('POST', '/v1/customers', `email=c${i}%40x.io`);
      const seen = await pageDeleting(t, '/v1/customers?limit=10');
      expect(seen).toHaveLength(25); // the seed too
      expect(new Set(seen).size).toBe(25);
      expect((await t.call('GET', '/v1/customers'))?.json.data).toEqual([]);
      // backwards too, and a cursor that never named an object is still refused
      expect((await t.call('GET', `/v1/customers?ending_before=${seen[0]}`))?.json.data).toEqual([]);
      expect((await t.call('GET', '/v1/customers?starting_after=cus_never'))?.status).toBe(400);
      // created again (an admin add with the id), it is a live cursor once more
      await t.engine.seeder.add('', t.engine.collection('customers')!, { id: seen[3] }, 'admin');
      expect((await t.call('GET', `/v1/customers?ending_before=${seen[3]}`))?.json.data).toEqual([]);
      expect((await t.call('GET', `/v1/customers?starting_after=${seen[3]}`))?.json.data).toEqual([]);
    }
  });

  test('idempotency keys and clear in Redis', async () => {
    const store = await redisStore();
    expect(await store.claimKey('', 'k', 'f1', 1000, 5000)).toBeUndefined();
    expect(await store.claimKey('', 'k', 'f1', 1001, 5000)).toEqual({ state: 'pending', fingerprint: 'f1' });
    await store.completeKey('', 'k', 'f1', { status: 200, headers: ['a', 'b'], body: 'e30=' }, 1002, 5000);
    expect(await store.claimKey('', 'k', 'f1', 1003, 5000)).toEqual({
      state: 'done',
      fingerprint: 'f1',
      answer: { status: 200, headers: ['a', 'b'], body: 'e30=' },
    });
    expect(await store.claimKey('', 'k', 'f2', 7000, 5000)).toBeUndefined(); // expired on the server clock
    expect(await store.claimKey('', 'other', 'f', 7000, 5000)).toBeUndefined();
    await store.releaseKey('', 'other');
    expect(await store.claimKey('', 'other', 'f', 7000, 5000)).toBeUndefined();
    await store.clearKeys('');
    expect(await store.claimKey('', 'k', 'f3', 7001, 5000)).toBeUndefined();
    const t = await testEngine(CONFIG, { store });
    await t.call('POST', '/v1/customers', 'email=a');
    expect(await store.collection('', 'customers').count({})).toBe(2);
    await store.clear('');
    expect(await store.collection('', 'customers').count({})).toBe(0);
    expect(await store.markSeeded('', 'customers')).toBe(true);
  });

  test('two engines on one Redis: one sees what the other created, one object moves once, and its event is sent once', async () => {
    const project = `pair${++projects}`;
    const a = await testEngine(CONFIG, { store: await redisStore(project) });
    const b = await testEngine(CONFIG, { store: await redisStore(project) });
    const made = (await a.call('POST', '/v1/customers', 'email=shared%40x.io'))?.json;
    expect((await b.call('GET', `/v1/customers/${made.id}`))?.json).toEqual(made);
    expect((await b.call('GET', '/v1/customers?limit=100'))?.json.data.map((c: { id: string }) => c.id)).toEqual([
      made.id,
      'cus_demo',
    ]); // seeded once
    const pi = (await b.call('POST', '/v1/payment_intents', ''))?.json;
    await a.call('POST', `/v1/payment_intents/${pi.id}/confirm`, '');
    await Promise.all([a.advance(5000), b.advance(5000)]);
    expect([...a.events, ...b.events].map((e) => e.event.type)).toEqual(['payment_intent.succeeded']);
    expect((await b.call('GET', `/v1/payment_intents/${pi.id}`))?.json.status).toBe('succeeded');
  });

  test('creates at once on one Redis, from two engines: each gets an object of its own (ids and GitHub numbers), none a 400', async () => {
    const project = `crowd${++projects}`;
    const a = await testEngine(CONFIG, { store: await redisStore(project) });
    const b = await testEngine(CONFIG, { store: await redisStore(project) });
    // Every create reads the same last seq and so draws the same seeded id first; all but one take another.
    await createsAtOnce(a, b);
  });
});
