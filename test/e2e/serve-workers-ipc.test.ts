// SPEC §12, "workers scale like node:cluster": a mock request costs a worker what it costs a single
// process — no IPC message to the primary or to other workers on its path. Counted honestly: a
// preload (test/fixtures/ipc/count-ipc.mjs) counts every message each worker sends and receives,
// node:cluster's own included, and the counts are read before and after a load on connections
// opened beforehand (a new connection costs node:cluster's own hand-over; a request costs nothing).
import { mkdir, readFile, readdir, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startServe, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { call, workerUrls } from '../helpers/workers.js';

const KEY = 'mk_workers_ipc_key_0123456789abcd';
const CONNECTIONS = 4;
const REQUESTS = 600;
const dir = useTempDir('mockapi-workers-ipc-');

const CONFIG = `project: workers-ipc
apiKey: ${KEY}
endpoints:
  - method: GET
    path: /a
    response:
      body: { ok: true }
  - method: POST
    path: /b
    response:
      status: 201
      body: { made: true }
  - method: GET
    path: /limited
    response:
      status: 429
      headers: { retry-after: "Fri, 01 Jan 2100 00:00:00 GMT" }
      body: { error: slow down }
`;

let serve: ServeProcess;
let counts: string;
let pids: number[];

beforeAll(async () => {
  counts = join(dir.path, 'counts');
  await mkdir(counts);
  const file = await writeConfig(dir.path, CONFIG);
  serve = await startServe(['-c', file, '--workers', '2', '--no-state', '--log', 'off'], {
    cwd: dir.path,
    env: {
      NODE_OPTIONS: `--import ${join(ROOT, 'test', 'fixtures', 'ipc', 'count-ipc.mjs')}`,
      MOCKAPI_IPC_COUNT_DIR: counts,
    },
  });
  await waitFor(async () => ((await workerUrls(dir.path)).length === 2 ? true : undefined));
  pids = (await registered()).map((w) => w.pid);
});
afterAll(() => serve?.stop('SIGTERM'));

interface Registered {
  pid: number;
  /** The worker's own loopback port. */
  url: string;
}

/** Each worker's pid and own URL, from its registration under .mockapi/servers/. */
async function registered(): Promise<Registered[]> {
  const folder = join(dir.path, '.mockapi', 'servers');
  const names = await readdir(folder);
  return Promise.all(
    names.map(async (name) => ({
      pid: Number(name.split('-')[0]),
      url: (JSON.parse(await readFile(join(folder, name), 'utf8')) as { url: string }).url,
    })),
  );
}

/** Each worker's message counts now. */
async function snapshot(): Promise<Map<number, { sent: number; received: number }>> {
  await Promise.all(pids.map((pid) => rm(join(counts, `${pid}.json`), { force: true })));
  for (const pid of pids) process.kill(pid, 'SIGUSR2');
  const read = await Promise.all(
    pids.map((pid) => waitFor(() => readFile(join(counts, `${pid}.json`), 'utf8').then(JSON.parse, () => undefined))),
  );
  return new Map(pids.map((pid, i) => [pid, read[i]]));
}

/** One request on the agent's connections; resolves with the status. */
function send(
  agent: Agent,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<number> {
  return new Promise((done, fail) => {
    const req = request(`${serve.url}${path}`, { method, agent, headers }, (res) => {
      res.resume().on('end', () => done(res.statusCode ?? 0));
    });
    req.on('error', fail).end(body);
  });
}

describe('serve --workers: IPC per mock request (SPEC §12)', () => {
  it('a mock request sends and receives no IPC message in any worker, whatever its answer, Retry-After and early retries included', async () => {
    let opened = 0;
    const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
    const create = agent.createConnection.bind(agent);
    agent.createConnection = (...args: Parameters<typeof create>) => {
      opened++;
      return create(...args);
    };
    const key = { 'x-api-key': KEY };
    // The connections first: node:cluster hands each to a worker (its own messages, not a request's);
    // and each worker gives the client a Retry-After, which it tells the other (once: it names the same moment after).
    expect(
      await Promise.all(Array.from({ length: CONNECTIONS }, () => send(agent, 'GET', '/mock/limited', key))),
    ).toEqual(Array(CONNECTIONS).fill(429));
    expect(opened).toBe(CONNECTIONS);
    // An admin call from each worker's own port: a worker's tell went to the primary before its call
    // did (one channel, in order), so once both calls answered, both tells were heard.
    for (const worker of await registered())
      expect((await call(worker.url, 'GET', '/__mockapi/requests/count')).status).toBe(200);

    const before = await snapshot();
    const statuses = new Map<number, number>();
    const loop = async (n: number) => {
      for (let i = n; i < REQUESTS; i += CONNECTIONS) {
        const kind = i % 5;
        const status =
          kind === 0
            ? await send(agent, 'GET', '/mock/a', key)
            : kind === 1
              ? await send(agent, 'POST', '/mock/b', { ...key, 'content-type': 'application/json' }, '{"n":1}')
              : kind === 2
                ? await send(agent, 'GET', '/mock/nowhere', key)
                : kind === 3
                  ? await send(agent, 'GET', '/mock/limited', key) // another Retry-After, an early retry noted
                  : await send(agent, 'GET', '/mock/a', {});
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, (_, n) => loop(n)));
    const after = await snapshot();
    agent.destroy();

    expect(opened).toBe(CONNECTIONS); // every request went on the connections already handed over
    expect(Object.fromEntries(statuses)).toEqual({
      200: REQUESTS / 5,
      201: REQUESTS / 5,
      404: REQUESTS / 5,
      429: REQUESTS / 5,
      401: REQUESTS / 5,
    });
    for (const pid of pids) expect({ pid, ...after.get(pid) }).toEqual({ pid, ...before.get(pid) });

    // Both workers answered (so each was measured), and every request is in the journal.
    const journal = (await call(serve.url, 'GET', '/__mockapi/requests?limit=1000')).body.requests as {
      id: number;
      path: string;
      notes: string[];
    }[];
    expect(journal).toHaveLength(REQUESTS + CONNECTIONS);
    expect(new Set(journal.map((entry) => entry.id % 256)).size).toBe(2);
    const early = journal.filter(
      (entry) => entry.path === '/mock/a' && entry.notes.some((note) => note.startsWith('early retry: ')),
    );
    expect(early.length).toBeGreaterThan(0);
  });

  it('an event stream on one worker has the other forward its requests while it is open, and only then', async () => {
    const workers = await registered();
    const [a, b] = workers as [Registered, Registered];
    const key = { 'x-api-key': KEY };
    const controller = new AbortController();
    const res = await fetch(`${a.url}/__mockapi/events`, { signal: controller.signal });
    const reader = res.body!.getReader();
    let text = '';
    const seen = (async () => {
      while (!text.includes('"path":"/mock/a"')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
    })();
    // Subscribing is not observable from outside: ask b until a's stream shows its request.
    while (!text.includes('"path":"/mock/a"'))
      expect((await call(b.url, 'GET', '/mock/a', { headers: key })).status).toBe(200);
    await seen;

    // While the stream is open, each of b's requests is one message (its entry, to a's stream).
    const open = await snapshot();
    for (let i = 0; i < 10; i++) await call(b.url, 'GET', '/mock/a', { headers: key });
    expect(((await snapshot()).get(b.pid)?.sent ?? 0) - (open.get(b.pid)?.sent ?? 0)).toBe(10);

    controller.abort();
    // Once the stream's end has reached the primary, b's requests cost nothing again.
    await waitFor(async () => {
      const before = await snapshot();
      for (let i = 0; i < 5; i++) await call(b.url, 'GET', '/mock/a', { headers: key });
      const after = await snapshot();
      return workers.every((w) => after.get(w.pid)?.sent === before.get(w.pid)?.sent) ? true : undefined;
    });
  });
});
