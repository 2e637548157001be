// `mockapi record --workers 2`: each worker records what it proxies; the primary gathers every
// worker's exchanges for the admin calls and at stop, and writes one config from all of them.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServe, useTempDir, waitFor, writeConfig } from '../helpers/cli.js';
import { call, workerUrls } from '../helpers/workers.js';
import { NO_PROXY_ENV, startUpstream, type Upstream } from '../helpers/upstream.js';

const KEY = 'mk_recordWorkers00000000000000000001';
const dir = useTempDir('mockapi-record-workers-');
let up: Upstream;
afterAll(async () => {
  await up?.close();
});

describe('mockapi record --workers 2', () => {
  it('writes one config from the requests both workers proxied, on a stop call and at the end', async () => {
    up = await startUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const id = /^\/(users|orders)\/(\d+)$/.exec(req.url);
      res.end(JSON.stringify(id === null ? { path: req.url } : { kind: id[1], id: Number(id[2]) }));
    });
    const file = await writeConfig(dir.path, `apiKey: ${KEY}\nupstream:\n  url: ${up.url}\nendpoints: []\n`);
    const s = await startServe(['-c', 'mockapi.yaml', '--no-state', '--log', 'off', '--workers', '2'], {
      cwd: dir.path,
      env: NO_PROXY_ENV,
      command: 'record',
    });
    try {
      expect(s.stdout()).toContain('2 workers');
      // Each worker's own port: these requests are answered by one worker, those by the other.
      const own = await waitFor(async () => {
        const urls = await workerUrls(dir.path);
        return urls.length === 2 ? urls : undefined;
      });
      const get = (url: string, path: string) => call(url, 'GET', `/mock${path}`, { headers: { 'x-api-key': KEY } });
      for (const [i, url] of own.entries()) {
        expect((await get(url, `/users/${i + 1}`)).body).toEqual({ kind: 'users', id: i + 1 });
        expect((await get(url, `/users/${i + 3}`)).status).toBe(200);
      }
      const status = await call(s.url, 'GET', '/__mockapi/recording');
      expect(status.status).toBe(200);
      expect(status.body).toMatchObject({ recording: true, requests: 4 });

      // Stopped through the second worker: the first worker's requests are written too.
      const stopped = await call(own[1]!, 'POST', '/__mockapi/recording/stop', { body: {} });
      expect(stopped.status).toBe(200);
      expect(stopped.body).toMatchObject({ recording: false, written: true });
      const afterStop = await readFile(file, 'utf8');
      expect(afterStop).toContain('path: /users/:id');
      expect(afterStop).toContain('# recorded from 4 requests by mockapi record');
      // While stopped, neither worker sends requests upstream (fallthrough is off) nor records them.
      for (const url of own) expect((await get(url, '/orders/9')).status).toBe(404);
      expect((await call(own[0]!, 'GET', '/__mockapi/recording')).body).toMatchObject({
        recording: false,
        requests: 0,
      });

      expect((await call(own[0]!, 'POST', '/__mockapi/recording/start', { body: {} })).body).toMatchObject({
        recording: true,
      });
      expect((await get(own[0]!, '/orders/1')).status).toBe(200);
      expect((await get(own[1]!, '/orders/2')).status).toBe(200);
      expect(await s.stop()).toBe(0);
      // The two requests recorded after the start, one per worker; not the two made while stopped.
      const written = await readFile(file, 'utf8');
      expect(written).toContain('# recorded from 2 requests by mockapi record\n  - recorded: GET /orders/:id');
      expect(written).toContain('# recorded from 4 requests by mockapi record\n  - recorded: GET /users/:id');
    } finally {
      await s.stop();
    }
  });
});
