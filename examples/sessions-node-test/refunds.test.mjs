import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useMockServer } from 'mockapi-cli/node-test';

const mock = useMockServer({ session: true });
const key = 'mk_sessionsExample00000000000000001';

test('an order refunded, while the other file reads the same path', async () => {
  await mock.stub({ method: 'GET', path: '/orders/:id', response: { body: { status: 'refunded' } } });
  const res = await fetch(`${mock.url}/mock/orders/3`, { headers: { 'x-api-key': key } });
  assert.deepEqual(await res.json(), { status: 'refunded' });
  const [request] = await mock.waitForRequests({ path: '/mock/orders/3' });
  assert.equal(request.status, 200);
});
