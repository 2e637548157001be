// Run-time stubs with `serve --workers 2`: every worker serves every stub from the moment the call
// that added it returns; `times` is exact across workers (the primary owns the count); removal and
// reset reach every worker.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { startServe, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { call, workerUrls } from '../helpers/workers.js';

const KEY = 'mk_stubsWorkers0000000000000000001';
const CONFIG = `apiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /users/:id\n    response: { body: config }\n`;
const dir = useTempDir('mockapi-stubs-workers-');
let serve: ServeProcess;
let a: string;
let b: string;
const get = (url: string, path: string) => call(url, 'GET', `/mock${path}`, { headers: { 'x-api-key': KEY } });

beforeAll(async () => {
  const file = await writeConfig(dir.path, CONFIG);
  serve = await startServe(['-c', file, '--workers', '2', '--no-state', '--log', 'off'], { cwd: dir.path });
  [a, b] = (await waitFor(async () => {
    const urls = await workerUrls(dir.path);
    return urls.length === 2 ? urls : undefined;
  })) as [string, string];
});
afterAll(() => serve?.stop());
beforeEach(async () => {
  expect((await call(a, 'POST', '/__mockapi/reset', { body: {} })).status).toBe(200);
});

describe('serve --workers 2', () => {
  test('a stub added through one worker is served by the other as soon as the call returns', async () => {
    for (let i = 0; i < 5; i++) {
      const [from, to] = i % 2 === 0 ? [a, b] : [b, a];
      const added = await call(from, 'POST', '/__mockapi/stubs', {
        body: { endpoint: { method: 'GET', path: `/s${i}`, response: { status: 201, body: `s${i}` } } },
      });
      expect(added.status).toBe(201);
      expect(await get(to, `/s${i}`)).toEqual({ status: 201, body: `s${i}` });
    }
    expect((await call(b, 'GET', '/__mockapi/stubs')).body.stubs).toHaveLength(5);
  });

  test('times is exact across workers under 50 concurrent requests', async () => {
    const added = await call(a, 'POST', '/__mockapi/stubs', {
      body: { endpoint: { method: 'GET', path: '/users/:id', response: { status: 299 } }, times: 9 },
    });
    expect(added.body.remaining).toBe(9);
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => get(i % 2 === 0 ? a : b, `/users/${i}`)));
    expect(answers.filter((r) => r.status === 299)).toHaveLength(9);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(41);
    // Used up: gone from both workers.
    expect((await call(a, 'GET', '/__mockapi/stubs')).body).toEqual({ stubs: [] });
    expect((await call(b, 'GET', '/__mockapi/stubs')).body).toEqual({ stubs: [] });
  });

  test("the remaining count is the whole server's, whichever worker answers", async () => {
    const { body } = await call(a, 'POST', '/__mockapi/stubs', {
      body: { endpoint: { method: 'GET', path: '/c' }, times: 3 },
    });
    expect((await get(a, '/c')).status).toBe(200);
    expect((await get(b, '/c')).status).toBe(200);
    expect((await call(b, 'GET', '/__mockapi/stubs')).body.stubs).toEqual([
      expect.objectContaining({ id: body.id, remaining: 1 }),
    ]);
    expect((await call(a, 'GET', '/__mockapi/stubs')).body.stubs).toEqual([
      expect.objectContaining({ id: body.id, remaining: 1 }),
    ]);
  });

  test('removing one, removing all and reset reach every worker', async () => {
    const one = await call(a, 'POST', '/__mockapi/stubs', { body: { endpoint: { method: 'GET', path: '/one' } } });
    await call(a, 'POST', '/__mockapi/stubs', { body: { endpoint: { method: 'GET', path: '/two' } } });
    await call(a, 'POST', '/__mockapi/stubs', { body: { endpoint: { method: 'GET', path: '/three' } } });
    expect((await call(b, 'DELETE', `/__mockapi/stubs/${one.body.id}`, { body: {} })).status).toBe(200);
    expect((await get(a, '/one')).status).toBe(404);
    expect((await get(a, '/two')).status).toBe(200);
    expect((await call(b, 'POST', '/__mockapi/reset', { body: { stubs: true } })).status).toBe(200);
    expect((await get(a, '/two')).status).toBe(404);
    await call(b, 'POST', '/__mockapi/stubs', { body: { endpoint: { method: 'GET', path: '/four' } } });
    expect((await call(a, 'DELETE', '/__mockapi/stubs', { body: {} })).status).toBe(200);
    expect((await get(b, '/four')).status).toBe(404);
  });
});
