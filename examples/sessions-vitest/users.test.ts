import { expect, test } from 'vitest';
import { useMockServer } from 'mockapi-cli/vitest';

const mock = useMockServer({ session: true }); // a session per test, dropped after it
const key = 'mk_sessionsExample00000000000000001'; // apiKey of mockapi.yaml

test('a user the API cannot find', async () => {
  await mock.stub({ method: 'GET', path: '/users/:id', response: { status: 404, body: { error: 'not_found' } } });
  // mock.url carries the session's prefix: `${mock.url}/mock/…` is in this test's session.
  const res = await fetch(`${mock.url}/mock/users/42`, { headers: { 'x-api-key': key } });
  expect(res.status).toBe(404);
  const [request] = await mock.waitForRequests({ path: '/mock/users/42' });
  expect(request.status).toBe(404);
});

test('a user, while another file stubs the same path', async () => {
  // No stub in this session: the config answers, whatever other tests added to theirs.
  const res = await fetch(`${mock.url}/mock/users/7`, { headers: { 'x-api-key': key } });
  expect(await res.json()).toEqual({ id: '7', name: 'Ada' });
  expect(await mock.countRequests()).toBe(1);
});
