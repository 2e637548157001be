// Many streams, half of them left by the client mid-stream, leave the server's file descriptors and
// timers at their baseline; a graceful stop ends open streams at once. The server runs in a child
// process of its own (test/helpers/stream-leak-server.mjs) that reports /proc/self/fd and
// process.getActiveResourcesInfo().
import { fork, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'undici';
import { afterAll, describe, expect, test } from 'vitest';

const KEY = 'mk_streamLeaks000000000000000000001';
const HELPER = new URL('./helpers/stream-leak-server.mjs', import.meta.url);
const STREAMS = 2000;
const CONCURRENT = 200;

const CONFIG = {
  apiKey: KEY,
  server: { journal: 5000 },
  endpoints: [
    // Left by the client after the first event: the second one would come an hour later.
    { method: 'GET', path: '/long', response: { stream: { events: [{ data: 'first' }, { data: 'later', gap: '1h' }, { data: 'last' }] } } },
    { method: 'GET', path: '/quick', response: { stream: { gap: '1ms', events: [{ $each: [1, 2, 3, 4, 5], data: '${item}' }] } } },
  ],
};

interface Resources {
  fds: number;
  counts: Record<string, number>;
}

const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

function startServer(): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(HELPER, [JSON.stringify(CONFIG)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.push(child);
  return new Promise((done, fail) => {
    child.once('message', (m: { url: string }) => done({ child, url: m.url }));
    child.once('exit', (code) => fail(new Error(`server exited with ${code}`)));
  });
}

function resources(child: ChildProcess): Promise<Resources> {
  return new Promise((done) => {
    child.once('message', (m) => done(m as Resources));
    child.send('resources');
  });
}

const watched = (r: Resources) => ({ fds: r.fds, timers: r.counts.Timeout ?? 0, sockets: r.counts.TCPSocketWrap ?? 0 });

async function settle(child: ChildProcess, baseline: ReturnType<typeof watched>): Promise<ReturnType<typeof watched>> {
  const deadline = Date.now() + 15_000;
  let now = watched(await resources(child));
  while (JSON.stringify(now) !== JSON.stringify(baseline) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    now = watched(await resources(child));
  }
  return now;
}

async function ended(url: string): Promise<Record<string, number>> {
  const res = await request(`${url}/__mockapi/requests?limit=${STREAMS + 10}`);
  const { requests } = (await res.body.json()) as { requests: Array<{ stream?: { ended: string } }> };
  const counts: Record<string, number> = {};
  for (const r of requests) if (r.stream !== undefined) counts[r.stream.ended] = (counts[r.stream.ended] ?? 0) + 1;
  return counts;
}

describe('stream resources', () => {
  test(`${STREAMS} streams, half left by the client mid-stream: fds and timers back at their baseline`, async () => {
    const { child, url } = await startServer();
    const first = new Agent({ connections: 1 });
    await (await request(`${url}/mock/quick`, { headers: { 'x-api-key': KEY }, dispatcher: first })).body.text(); // warm up
    await first.close();
    const baseline = await settle(child, watched(await resources(child)));

    const agent = new Agent({ connections: CONCURRENT, pipelining: 0 });
    const one = async (i: number): Promise<void> => {
      if (i % 2 === 0) {
        await (await request(`${url}/mock/quick`, { headers: { 'x-api-key': KEY }, dispatcher: agent })).body.text();
        return;
      }
      const controller = new AbortController();
      const res = await request(`${url}/mock/long`, { headers: { 'x-api-key': KEY }, dispatcher: agent, signal: controller.signal });
      const body = res.body[Symbol.asyncIterator]();
      await body.next(); // the first event
      controller.abort();
      await body.next().catch(() => undefined);
    };
    for (let start = 0; start < STREAMS; start += CONCURRENT) {
      await Promise.all(Array.from({ length: CONCURRENT }, (_, k) => one(start + k)));
    }
    await agent.close();

    // Every stream has ended, and the journal says how: the long ones when their client left.
    let counts: Record<string, number> = {};
    for (let i = 0; i < 300 && (counts.client ?? 0) + (counts.complete ?? 0) < STREAMS + 1; i++) {
      counts = await ended(url);
      if ((counts.client ?? 0) + (counts.complete ?? 0) < STREAMS + 1) await new Promise((r) => setTimeout(r, 50));
    }
    expect(counts).toEqual({ complete: STREAMS / 2 + 1, client: STREAMS / 2 });
    expect(await settle(child, baseline)).toEqual(baseline);
    child.send('stop');
  }, 120_000);

  test('a graceful stop ends an open stream at once', async () => {
    const { child, url } = await startServer();
    const res = await request(`${url}/mock/long`, { headers: { 'x-api-key': KEY } });
    const body = res.body[Symbol.asyncIterator]();
    expect(Buffer.from((await body.next()).value as Uint8Array).toString()).toBe('data: first\n\n');
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    child.send('stop');
    const rest = (async () => {
      for (;;) if ((await body.next()).done) return 'ended';
    })().catch(() => 'ended');
    // Generous bounds: without the stop, the next event is an hour away.
    const within = <T>(p: Promise<T>) => Promise.race([p, new Promise<string>((r) => setTimeout(r, 5000, 'still open'))]);
    expect(await within(rest)).toBe('ended');
    expect(await within(exited)).toBe(0);
  });
});
