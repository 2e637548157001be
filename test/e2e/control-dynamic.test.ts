// SPEC §8 with dynamic answers (SPEC §7): `response` names the answer that answered, the endpoints
// listing names every answer, reset zeroes sequences and scenarios, PUT moves a scenario.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startMockServer, type MockServer } from '../../src/mock-server.js';
import { admin, mock } from '../helpers/control.js';

const KEY = 'mk_dynamicControl0000000000000001';
let server: MockServer;
beforeAll(async () => {
  server = await startMockServer({
    port: 0,
    config: {
      apiKey: KEY,
      scenarios: { cart: { initial: 'empty' } },
      endpoints: [
        {
          method: 'GET',
          path: '/users/:id',
          responses: [
            { name: 'missing', when: { 'params.id': '404' }, status: 404 },
            { when: { 'params.id': '7' }, sequence: [{ status: 503 }, { body: { id: 7 } }] },
            { name: 'found', body: { ok: true } },
          ],
        },
        { method: 'POST', path: '/cart', response: { status: 201, setState: { cart: 'full' } } },
      ],
    },
  });
});
afterAll(() => server?.close());
const get = (path: string) => mock(server.url, 'GET', path, { headers: { 'x-api-key': KEY } });

test('the journal names the answer; reset restarts sequences and scenarios; PUT moves a scenario', async () => {
  await get('/mock/users/404');
  await get('/mock/users/7');
  await get('/mock/users/7');
  await get('/mock/users/1');
  await mock(server.url, 'POST', '/mock/cart', { headers: { 'x-api-key': KEY } });
  expect((await server.requests()).map((e) => [e.status, e.response])).toEqual([
    [404, 'missing'],
    [503, 'responses[1].sequence[0]'],
    [200, 'responses[1].sequence[1]'],
    [200, 'found'],
    [201, 'response'],
  ]);
  expect(
    (await admin(server.url, 'GET', 'endpoints')).body.endpoints.map((e: any) => [e.endpoint, e.answers, e.requests]),
  ).toEqual([
    ['GET /users/:id', ['missing', 'responses[1].sequence[0]', 'responses[1].sequence[1]', 'found'], 4],
    ['POST /cart', ['response'], 1],
  ]);
  expect((await admin(server.url, 'GET', 'scenarios')).body).toEqual({ cart: 'full' });
  const reset = await admin(server.url, 'POST', 'reset', { journal: false, usage: false, rateLimit: false });
  expect(reset.body.scenarios).toEqual({ cart: 'empty' });
  expect((await get('/mock/users/7')).status).toBe(503); // the sequence starts over
  expect(await admin(server.url, 'PUT', 'scenarios/cart', { state: 'paid' })).toMatchObject({
    status: 200,
    body: { cart: 'paid' },
  });
  expect(await server.scenarios.get()).toEqual({ cart: 'paid' });
  expect((await admin(server.url, 'PUT', 'scenarios/nope', { state: 'x' })).status).toBe(404);
});
