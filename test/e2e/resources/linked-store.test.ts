// The store of `serve --workers` without a store (src/workers/resource-link.ts and resource-host.ts)
// over a channel of the test's own, every message through JSON as node:cluster's IPC sends it: the
// same answers as the in-memory store to the same story (pages, cursors, filters, writes, the
// lifecycle, history); two engines on one primary see one collection, move an object once, draw
// distinct ids when creating at once; idempotency keys as the in-memory store keeps them.
import { describe, expect, test } from 'vitest';
import { MemoryResourceStore } from '../../../src/resources/memory-store.js';
import type { ResourceStore } from '../../../src/resources/store.js';
import { createResourceHost, type ResourceHost } from '../../../src/workers/resource-host.js';
import { LinkedResourceStore } from '../../../src/workers/resource-link.js';
import { testEngine } from './helpers.js';
import { CONFIG, createsAtOnce, pageDeleting, story } from './store-story.js';

/** A worker's store whose messages reach `host` (and its replies come back) as JSON, a turn later; a filtered walk asks for 3 candidates at a time. */
function linked(host: ResourceHost): ResourceStore {
  let hear: (message: unknown) => void = () => {};
  const peer = {
    isConnected: () => true,
    send(message: unknown, done: (err: Error | null) => void) {
      const copy = JSON.parse(JSON.stringify(message)) as unknown;
      setImmediate(() => hear(copy));
      done(null);
    },
  };
  return new LinkedResourceStore(
    {
      connected: true,
      send(message, failed) {
        const copy = JSON.parse(JSON.stringify(message)) as unknown;
        setImmediate(() => host.receive(peer, copy));
        failed(null);
      },
      listen(onMessage) {
        hear = onMessage;
        return () => (hear = () => {});
      },
    },
    3,
  );
}

describe('the store of workers without a store: the primary’s, over IPC', () => {
  test('answers the same story as the in-memory store', async () => {
    const memory = await story(new MemoryResourceStore());
    expect(await story(linked(createResourceHost()))).toEqual(memory);
    expect(JSON.stringify(memory)).toContain('"has_more":true');
  });

  test('two engines on one primary: one sees what the other created, seeded once, one object moves once, its event sent once', async () => {
    const host = createResourceHost();
    const a = await testEngine(CONFIG, { store: linked(host) });
    const b = await testEngine(CONFIG, { store: linked(host) });
    const made = (await a.call('POST', '/v1/customers', 'email=shared%40x.io'))?.json;
    expect((await b.call('GET', `/v1/customers/${made.id}`))?.json).toEqual(made);
    expect((await b.call('GET', '/v1/customers?limit=100'))?.json.data.map((c: { id: string }) => c.id)).toEqual([
      made.id,
      'cus_demo',
    ]);
    const pi = (await b.call('POST', '/v1/payment_intents', ''))?.json;
    const confirms = await Promise.all(
      [a, b, a, b].map((t) => t.call('POST', `/v1/payment_intents/${pi.id}/confirm`, '')),
    );
    expect(confirms.map((c) => c?.status).sort()).toEqual([200, 400, 400, 400]);
    await Promise.all([a.advance(5000), b.advance(5000)]);
    await Promise.all([a, b, a, b].map((t) => t.call('GET', `/v1/payment_intents/${pi.id}`)));
    expect([...a.events, ...b.events].map((e) => e.event.type)).toEqual(['payment_intent.succeeded']);
    const kinds = (await a.store.collection('', 'payment_intents').history(pi.id)).map((h) => h.kind);
    expect(kinds).toEqual(['created', 'action', 'lifecycle']);
  });

  test('creates at once from two engines: each gets an object of its own (ids and GitHub numbers), none a 400', async () => {
    const host = createResourceHost();
    const a = await testEngine(CONFIG, { store: linked(host) });
    const b = await testEngine(CONFIG, { store: linked(host) });
    await createsAtOnce(a, b);
  });

  test('a filtered list paged while each page is deleted goes on from the deleted cursor', async () => {
    const t = await testEngine(CONFIG, { store: linked(createResourceHost()) });
    for (let i = 0; i < 24; i++) await t.call('POST', '/v1/customers', `email=${i % 2 === 0 ? 'even' : 'odd'}%40x.io`);
    const seen = await pageDeleting(t, '/v1/customers?email=even%40x.io&limit=5');
    expect(new Set(seen).size).toBe(12);
    expect((await t.call('GET', '/v1/customers?limit=100'))?.json.data.length).toBe(13); // the odd ones and the seed
  });

  test('idempotency keys: claimed, pending, done, expired on the server clock, released, cleared', async () => {
    const store = linked(createResourceHost());
    expect(await store.claimKey('', 'k', 'f1', 1000, 5000)).toBeUndefined();
    expect(await store.claimKey('', 'k', 'f1', 1001, 5000)).toEqual({ state: 'pending', fingerprint: 'f1' });
    await store.completeKey('', 'k', 'f1', { status: 200, headers: ['a', 'b'], body: 'e30=' }, 1002, 5000);
    expect(await store.claimKey('', 'k', 'f1', 1003, 5000)).toEqual({
      state: 'done',
      fingerprint: 'f1',
      answer: { status: 200, headers: ['a', 'b'], body: 'e30=' },
    });
    expect(await store.claimKey('', 'k', 'f2', 7000, 5000)).toBeUndefined();
    expect(await store.claimKey('', 'other', 'f', 7000, 5000)).toBeUndefined();
    await store.releaseKey('', 'other');
    expect(await store.claimKey('', 'other', 'f', 7000, 5000)).toBeUndefined();
    await store.clearKeys('');
    expect(await store.claimKey('', 'k', 'f3', 7001, 5000)).toBeUndefined();
    await store.clear('');
    expect(await store.markSeeded('', 'customers')).toBe(true);
    expect(await store.markSeeded('', 'customers')).toBe(false);
    expect(await store.nextDue()).toBeUndefined();
  });
});
