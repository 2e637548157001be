import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useMockServer } from 'mockapi-cli/node-test';

const mock = useMockServer({ session: true });
const key = 'mk_sessionsExample00000000000000001'; // apiKey of mockapi.yaml

test('an order as the config has it', async () => {
  const res = await fetch(`${mock.url}/mock/orders/1`, { headers: { 'x-api-key': key } });
  assert.deepEqual(await res.json(), { id: '1', status: 'paid' });
});

test('an order that failed, in this test alone', async () => {
  await mock.stub({ method: 'GET', path: '/orders/:id', response: { body: { status: 'failed' } } });
  const res = await fetch(`${mock.url}/mock/orders/2`, { headers: { 'x-api-key': key } });
  assert.deepEqual(await res.json(), { status: 'failed' });
  assert.equal(await mock.countRequests(), 1);
});
