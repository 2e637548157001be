import { expect, test } from 'vitest';
import { useMockServer } from 'mockapi-cli/vitest';

const mock = useMockServer({ session: true });
const key = 'mk_sessionsExample00000000000000001';

test('the next month, in this session alone', async () => {
  await mock.stub({ method: 'GET', path: '/users/:id', response: { status: 503 } });
  await mock.clock.advance('1d'); // February here; every other session is still in January
  // mock.headers names the session, for a client whose base URL cannot change.
  const res = await fetch(`${mock.serverUrl}/mock/time`, { headers: { 'x-api-key': key, ...mock.headers } });
  expect((await res.json()).now).toMatch(/^2026-02-01T/);
  expect((await fetch(`${mock.url}/mock/users/1`, { headers: { 'x-api-key': key } })).status).toBe(503);
});
