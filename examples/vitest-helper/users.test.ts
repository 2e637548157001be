import { expect, test } from 'vitest';
import { useMockServer } from 'mockapi-cli/vitest';

const mock = useMockServer({ config: './mockapi.yaml' });
const getUser = () => fetch(`${mock.url}/mock/users/42`, { headers: { 'x-api-key': mock.apiKey } });

test('the client sees a 503 once, then the user', async () => {
  await mock.stub({ method: 'GET', path: '/users/:id', response: { status: 503 } }, { times: 1 });
  expect((await getUser()).status).toBe(503);
  expect((await getUser()).status).toBe(200);
  const [first] = await mock.waitForRequests({ path: '/mock/users/42' });
  expect(first.status).toBe(503);
});
