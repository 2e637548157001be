// The story both store contracts tell (store-contract.test.ts: memory and Redis; linked-store.test.ts:
// memory and the primary's store of `serve --workers` over IPC): the same operations on an engine
// over each store — writes, pages, cursors, filters, GitHub's pages, an action and its `when`, the
// lifecycle and history — whose answers must be the same.
import type { ResourceStore } from '../../../src/resources/store.js';
import { expect } from 'vitest';
import { testEngine, type TestEngine } from './helpers.js';

export const CONFIG = {
  seed: 5,
  webhooks: { targets: { app: { url: 'http://127.0.0.1:9/hooks' } } },
  resources: {
    customers: {
      style: 'stripe',
      path: '/v1/customers',
      fields: { object: 'customer', email: null, metadata: {} },
      seed: [{ id: 'cus_demo' }],
    },
    issues: { style: 'github', path: '/repos/:owner/:repo/issues', fields: { state: 'open' } },
    payment_intents: {
      style: 'stripe',
      path: '/v1/payment_intents',
      fields: { object: 'payment_intent', status: 'requires_confirmation' },
      actions: { confirm: { set: { status: 'processing' }, when: { status: 'requires_confirmation' } } },
      lifecycle: [{ from: 'processing', after: '2s', to: 'succeeded', send: ['payment_intent.succeeded'] }],
    },
  },
};

/** The same story told to an engine over `store`; what it saw, for comparison. */
export async function story(store: ResourceStore): Promise<unknown[]> {
  const t = await testEngine(CONFIG, { store });
  const seen: unknown[] = [];
  const ids: string[] = [];
  for (let i = 0; i < 12; i++)
    ids.push((await t.call('POST', '/v1/customers', `email=c${i % 3}%40x.io&metadata[n]=${i}`))?.json.id);
  seen.push((await t.call('GET', '/v1/customers?limit=5'))?.json);
  seen.push((await t.call('GET', `/v1/customers?limit=5&starting_after=${ids[6]}`))?.json);
  seen.push((await t.call('GET', `/v1/customers?limit=5&ending_before=${ids[2]}`))?.json);
  seen.push((await t.call('GET', '/v1/customers?email=c1%40x.io&limit=2'))?.json);
  seen.push((await t.call('GET', `/v1/customers?email=c1%40x.io&limit=2&starting_after=${ids[7]}`))?.json);
  seen.push((await t.call('GET', '/v1/customers?starting_after=cus_none'))?.status);
  seen.push((await t.call('POST', `/v1/customers/${ids[0]}`, 'metadata[n]=&metadata[m]=1'))?.json);
  seen.push((await t.call('DELETE', `/v1/customers/${ids[1]}`))?.json);
  seen.push((await t.call('GET', `/v1/customers/${ids[1]}`))?.status);
  seen.push((await t.call('GET', `/v1/customers?limit=3&starting_after=${ids[1]}`))?.json);
  for (let i = 0; i < 7; i++) await t.call('POST', '/repos/o/r/issues', { title: `i${i}` }, 'application/json');
  await t.call('POST', '/repos/o/other/issues', { title: 'elsewhere' }, 'application/json');
  const page = await t.call('GET', '/repos/o/r/issues?per_page=3&page=2');
  seen.push(page?.json, page?.headers.link);
  const pi = (await t.call('POST', '/v1/payment_intents', ''))?.json;
  seen.push((await t.call('POST', `/v1/payment_intents/${pi.id}/confirm`, ''))?.status);
  seen.push((await t.call('POST', `/v1/payment_intents/${pi.id}/confirm`, ''))?.status); // its `when` no longer holds
  await t.advance(2000);
  seen.push(
    (await t.call('GET', `/v1/payment_intents/${pi.id}`))?.json.status,
    t.events.map((e) => e.event.type),
  );
  seen.push(await t.store.collection('', 'payment_intents').history(pi.id));
  return seen;
}

/** Creates at once from two engines over one store: each gets an object of its own (ids, GitHub numbers), none a 400; 60 customers beside the seed. */
export async function createsAtOnce(a: TestEngine, b: TestEngine): Promise<void> {
  const customers = await Promise.all(
    Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? a : b).call('POST', '/v1/customers', `email=c${i}%40x.io`)),
  );
  expect(customers.map((c) => c?.status)).toEqual(Array(60).fill(200));
  expect(new Set(customers.map((c) => c?.json.id)).size).toBe(60);
  const issues = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      (i % 2 === 0 ? a : b).call('POST', '/repos/o/r/issues', { title: `t${i}` }, 'application/json'),
    ),
  );
  expect(issues.map((c) => c?.status)).toEqual(Array(40).fill(201));
  expect(new Set(issues.map((c) => c?.json.number ?? c?.json.id)).size).toBe(40);
  expect(((await a.call('GET', '/v1/customers?limit=100'))?.json.data as unknown[]).length).toBe(61);
}

/**
 * Pages `query` (a list path with its filters, without a cursor) 10 or `limit` at a time, deleting
 * each object of a page before asking for the next one from its last id (stripe-node's autopaging
 * over a list a test empties): the ids seen, in order.
 */
export async function pageDeleting(t: TestEngine, query: string): Promise<string[]> {
  const seen: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await t.call('GET', `${query}${after === undefined ? '' : `&starting_after=${after}`}`);
    expect(page?.status).toBe(200);
    const data = page?.json.data as Array<{ id: string }>;
    for (const c of data) {
      seen.push(c.id);
      expect((await t.call('DELETE', `/v1/customers/${c.id}`))?.status).toBe(200);
    }
    if (!page?.json.has_more) return seen;
    after = data.at(-1)?.id;
  }
}
