// 10,000 streams (every format, presets, a stall fault), half of them left by the client mid-stream
// while their next event's timer is pending, leave the server's file descriptors, timers and other
// handles at their baseline; a graceful stop ends open streams at once. The server runs in a child
// process of its own (test/helpers/stream-leak-server.mjs) that reports /proc/self/fd and
// process.getActiveResourcesInfo().
import { fork, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'undici';
import { afterAll, describe, expect, test } from 'vitest';

const KEY = 'mk_streamLeaks000000000000000000001';
const HELPER = new URL('../helpers/stream-leak-server.mjs', import.meta.url);
const STREAMS = 10_000;
const CONCURRENT = 100;

// Left by the client after the first event, with a timer pending for the next one (an hour away):
// every format, a preset, and a stall fault; /stall-head stalls before any event (left after the head).
const LEFT = ['/sse-wait', '/ndjson-wait', '/chunks-wait', '/chat-wait', '/stall', '/stall-head'];
// Read to their end: every format and a preset, each with gaps.
const WHOLE = ['/sse-quick', '/ndjson-quick', '/chunks-quick', '/anthropic-quick'];
const get = (path: string, stream: object) => ({ method: 'GET', path, response: { stream } });
const five = [{ $each: [1, 2, 3, 4, 5], data: { n: '${item}' } }];

const CONFIG = {
  apiKey: KEY,
  server: { journal: STREAMS + 10 },
  endpoints: [
    get('/sse-wait', { events: [{ data: 'first' }, { data: 'later', gap: '1h' }, { data: 'last' }] }),
    get('/ndjson-wait', { format: 'ndjson', gap: '1h', events: [{ data: { n: 1 } }, { data: { n: 2 } }] }),
    get('/chunks-wait', { format: 'chunks', gap: '1h', events: [{ data: 'Hel' }, { data: 'lo' }] }),
    get('/chat-wait', { preset: 'openai-chat', text: 'Hello from the mock.', gap: '1h' }),
    get('/stall', { gap: '1ms', events: five, faults: [{ kind: 'stall', after: 1, rate: 1, for: '1h' }] }),
    get('/stall-head', { events: five, faults: [{ kind: 'stall', after: 0, rate: 1, for: '1h' }] }),
    get('/first-byte', { firstByte: '1h', events: five }),
    { method: 'GET', path: '/delayed', response: { delay: '1h', stream: { events: five } } },
    get('/sse-quick', { gap: '1ms', events: five }),
    get('/ndjson-quick', { format: 'ndjson', gap: { min: '0ms', max: '2ms' }, events: five }),
    get('/chunks-quick', { format: 'chunks', gap: '1ms', events: five }),
    get('/anthropic-quick', { preset: 'anthropic', text: 'Bonjour le monde', chunkBy: 4, gap: '1ms' }),
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

/** Open fds, pending timers, sockets, and every active handle, request and timer of the server process. */
const watched = (r: Resources) => ({
  fds: r.fds,
  timers: r.counts.Timeout ?? 0,
  sockets: r.counts.TCPSocketWrap ?? 0,
  resources: Object.values(r.counts).reduce((a, b) => a + b, 0),
});

async function settle(child: ChildProcess, baseline: ReturnType<typeof watched>): Promise<ReturnType<typeof watched>> {
  const deadline = Date.now() + 30_000;
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
  test(`${STREAMS.toLocaleString('en')} streams, half left by the client mid-stream: fds and timers back at their baseline`, async () => {
    const { child, url } = await startServer();
    const headers = { 'x-api-key': KEY };
    const first = new Agent({ connections: 1 });
    for (const path of WHOLE) await (await request(`${url}/mock${path}`, { headers, dispatcher: first })).body.text(); // warm up
    await first.close();
    const baseline = await settle(child, watched(await resources(child)));

    // Keep-alive connections, CONCURRENT streams at a time: a client that leaves closes its connection.
    const agent = new Agent({ connections: CONCURRENT, pipelining: 1 });
    const one = async (i: number): Promise<void> => {
      const half = Math.floor(i / 2);
      if (i % 2 === 0) {
        const res = await request(`${url}/mock${WHOLE[half % WHOLE.length]}`, { headers, dispatcher: agent });
        await res.body.text();
        return;
      }
      const controller = new AbortController();
      const res = await request(`${url}/mock${LEFT[half % LEFT.length] as string}`, {
        headers,
        dispatcher: agent,
        signal: controller.signal,
      });
      const path = LEFT[half % LEFT.length] as string;
      const body = res.body[Symbol.asyncIterator]();
      if (path !== '/stall-head') await body.next(); // the first event: the stream's next timer is pending
      controller.abort();
      await body.next().catch(() => undefined);
    };
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < STREAMS) await one(next++);
    };
    await Promise.all(Array.from({ length: CONCURRENT }, worker));
    await agent.close();

    // Every stream has ended, and the journal says how: the long ones when their client left.
    const expected = { complete: STREAMS / 2 + WHOLE.length, client: STREAMS / 2 };
    let counts: Record<string, number> = {};
    for (let i = 0; i < 600 && (counts.client ?? 0) + (counts.complete ?? 0) < STREAMS + WHOLE.length; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 50));
      counts = await ended(url);
    }
    expect(counts).toEqual(expected);
    expect(await settle(child, baseline)).toEqual(baseline);
    child.send('stop');
  }, 240_000);

  test('clients that leave before the first byte (a firstByte wait, a delay): timers back at their baseline', async () => {
    const { child, url } = await startServer();
    const baseline = await settle(child, watched(await resources(child)));
    const count = 200;
    const agent = new Agent({ connections: count });
    const controllers = Array.from({ length: count }, () => new AbortController());
    const pending = controllers.map((controller, i) =>
      request(`${url}/mock${i % 2 === 0 ? '/first-byte' : '/delayed'}`, {
        headers: { 'x-api-key': KEY },
        dispatcher: agent,
        signal: controller.signal,
      }).catch(() => 'left'),
    );
    // Every request has arrived and waits on its timer.
    const deadline = Date.now() + 30_000;
    while (watched(await resources(child)).timers < baseline.timers + count && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(watched(await resources(child)).timers).toBe(baseline.timers + count);
    for (const controller of controllers) controller.abort();
    expect(new Set(await Promise.all(pending))).toEqual(new Set(['left']));
    await agent.close();
    expect(await settle(child, baseline)).toEqual(baseline);
    const counts = await ended(url);
    expect(counts).toEqual({ client: count / 2 }); // the delayed ones had not started their stream
    child.send('stop');
  }, 120_000);

  test('a graceful stop ends an open stream at once', async () => {
    const { child, url } = await startServer();
    const res = await request(`${url}/mock/sse-wait`, { headers: { 'x-api-key': KEY } });
    const body = res.body[Symbol.asyncIterator]();
    expect(Buffer.from((await body.next()).value as Uint8Array).toString()).toBe('data: first\n\n');
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    child.send('stop');
    const rest = (async () => {
      for (;;) if ((await body.next()).done) return 'ended';
    })().catch(() => 'ended');
    // Generous bounds: without the stop, the next event is an hour away.
    const within = <T>(p: Promise<T>) =>
      Promise.race([p, new Promise<string>((r) => setTimeout(r, 5000, 'still open'))]);
    expect(await within(rest)).toBe('ended');
    expect(await within(exited)).toBe(0);
  });
});
