import { beforeEach, expect, inject, test } from 'vitest';
import { connectMockServer } from 'mockapi-cli/client';
import { createShopClient, ShopError } from './shop-client.js';

const KEY = 'mk_testingExample0000000000000000007';
// The server runs in vitest's main process (global-setup.ts); the tests reach it over HTTP.
const mock = connectMockServer(inject('mockBaseUrl'));
const shop = createShopClient(`${inject('mockBaseUrl')}/mock`, KEY);

// Every test starts from zero: empty journal, no usage, an empty rate window.
beforeEach(() => mock.reset());

test('the client sends the order as JSON with its key', async () => {
  await shop.placeOrder({ item: 'espresso cup', quantity: 2 });
  const [request] = await mock.waitForRequests({ method: 'POST', path: '/mock/orders' });
  expect(JSON.parse(request!.body)).toEqual({ item: 'espresso cup', quantity: 2 });
  expect(request!.headers['content-type']).toBe('application/json');
  expect(request!.credential).toEqual({ via: 'x-api-key', key: 'current' });
});

test('the quota is fresh in every test (reset in beforeEach)', async () => {
  expect((await mock.usage()).requests).toBe(0);
  for (let i = 0; i < 3; i++) await shop.placeOrder({ item: 'kettle', quantity: 1 });
  await expect(shop.placeOrder({ item: 'kettle', quantity: 1 })).rejects.toEqual(new ShopError(429));
});

test('after a key rotation the old key is refused', async () => {
  const newKey = await mock.rotateKey(); // resolves once the server serves the new key
  try {
    await expect(shop.placeOrder({ item: 'mug', quantity: 1 })).rejects.toEqual(new ShopError(401));
    const [refused] = await mock.requests({ status: 401 });
    expect(refused!.credential.key).toBe('previous');
    await expect(createShopClient(`${inject('mockBaseUrl')}/mock`, newKey).placeOrder({ item: 'mug', quantity: 1 })).resolves.toMatchObject({ id: 1001 });
  } finally {
    await mock.rotateKey(KEY); // the other tests use the original key
  }
});

test('the quota comes back when the month changes', async () => {
  await mock.clock.set('2026-11-30T23:59:58Z');
  for (let i = 0; i < 3; i++) await shop.placeOrder({ item: 'filter', quantity: 1 });
  await expect(shop.placeOrder({ item: 'filter', quantity: 1 })).rejects.toEqual(new ShopError(429));
  await mock.clock.advance('5s'); // December now
  await expect(shop.placeOrder({ item: 'filter', quantity: 1 })).resolves.toMatchObject({ status: 'received' });
  expect(await mock.usage()).toMatchObject({ month: '2026-12', requests: 1, remaining: 2 });
});
