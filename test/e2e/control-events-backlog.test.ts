// An event stream (`GET /__mockapi/events`) whose reader stops reading (`mockapi requests -f | less`
// left paused) must not make the server keep every event for it: past 4 MiB of backlog the stream
// is ended with a `: dropped:` comment, and the connection is cut if the reader still does not read.
// Black-box, single process and `--workers 2` (whose workers serve event streams from the journal
// every worker mirrors).
import { readFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, describe, expect, test, vi } from 'vitest';
import { Pool } from 'undici';
import { startServe, stopAll, useTempDir, waitFor, writeConfig } from '../helpers/cli.js';
import { collectGarbage, INSPECTED } from '../helpers/heap.js';
import { createAdminApi, DROPPED, EVENT_BACKLOG_LIMIT } from '../../src/control/admin-api.js';
import type { ControlEvent, ControlPlane } from '../../src/control/control-plane.js';
import { readEvents } from '../../src/cli/commands/requests.js';

const KEY = 'mk_backlogKey00000000000000000000001';
const dir = useTempDir('mockapi-events-backlog-');
afterAll(stopAll);

const BODY = 'a'.repeat(60 * 1024); // the journal keeps 64 KiB of a body, so each event carries all of it
const REQUESTS = 1500; // about 88 MiB of events: far past the 4 MiB limit and the kernel's socket buffers
const MiB = 1024 * 1024;

/** Resident memory of each process that serves requests, in bytes: the serve process, or with `--workers` each worker (its children). */
async function servingRss(pid: number, workers: boolean): Promise<number[]> {
  const rss = async (p: number) =>
    Number(/VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  const children = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => ''))
    .split(' ')
    .filter(Boolean)
    .map(Number);
  return Promise.all((workers ? children : [pid]).map(rss));
}

/** Subscribes over a raw connection and stops reading once the stream's head arrived. */
function subscribe(url: string): Promise<{ socket: Socket; head: string }> {
  const { port } = new URL(url);
  return new Promise((ready, fail) => {
    const socket = connect(Number(port), '127.0.0.1');
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (!text.includes(': mockapi events\n\n')) return;
      socket.off('data', onData);
      socket.pause(); // never reads again (until the test looks at what is left)
      ready({ socket, head: text });
    };
    socket.on('data', onData);
    socket.once('error', fail);
    socket.write('GET /__mockapi/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  });
}

/** Reads what the connection still holds until it closes; rejects when it stays open for 20 s. */
function readToClose(socket: Socket): Promise<{ bytes: number; tail: string }> {
  return new Promise((done, fail) => {
    let bytes = 0;
    let tail = '';
    const timer = setTimeout(() => fail(new Error(`the stream stayed open (${bytes} bytes read)`)), 20_000);
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      tail = (tail + chunk.toString('latin1')).slice(-200);
    });
    socket.on('error', () => {});
    socket.once('close', () => {
      clearTimeout(timer);
      done({ bytes, tail });
    });
    socket.resume();
  });
}

describe.each([
  ['one process', [] as string[]],
  ['--workers 2', ['--workers', '2']],
])('a reader that stops reading the event stream (%s)', (_name, extra) => {
  test('is dropped past 4 MiB of backlog, and the server memory stays bounded', async () => {
    const config = await writeConfig(
      dir.path,
      `apiKey: ${KEY}\nserver:\n  journal: 10\nendpoints:\n  - method: POST\n    path: /orders\n    response: { status: 201 }\n`,
      `backlog-${extra.length}.yaml`,
    );
    const server = await startServe(['-c', config, '--no-state', '--no-watch', '--log', 'off', ...extra], {
      env: INSPECTED,
    });
    const pool = new Pool(server.url, { connections: 4 });
    const post = async () => {
      const res = await pool.request({
        method: 'POST',
        path: '/mock/orders',
        headers: { 'x-api-key': KEY, 'content-type': 'text/plain' },
        body: BODY,
      });
      await res.body.dump();
      expect(res.statusCode).toBe(201);
    };
    const run = async (count: number) => {
      for (let i = 0; i < count; i += 4) await Promise.all([post(), post(), post(), post()]);
    };
    try {
      await run(200); // warm up before the baseline
      const subscriber = await subscribe(server.url);
      expect(subscriber.head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      const workers = extra.length > 0;
      // Read after full collections (test/helpers/heap.ts): what the processes hold, not the
      // garbage of 88 MiB of requests, which V8 collects when it will.
      await collectGarbage(server);
      const before = await servingRss(server.child.pid!, workers);
      await run(REQUESTS);
      await collectGarbage(server);
      const after = await servingRss(server.child.pid!, workers);
      // Kept for the reader, the events would be some 70 MiB more (88 MiB less what the kernel
      // holds) in the process that serves the stream.
      expect(after.length).toBe(workers ? 2 : 1);
      for (const [i, rss] of after.entries())
        expect(rss - before[i]!, `growth of serving process ${i}`).toBeLessThan(55 * MiB);
      const rest = await readToClose(subscriber.socket);
      // Ended with the reason and the stream's end (chunked framing) — or, when the reader did not
      // read within the grace of 10 s after that, cut: either way the server let go of it.
      if (rest.tail.includes('\r\n0\r\n\r\n'))
        expect(rest.tail).toMatch(
          /: dropped: this reader fell more than 4 MiB behind; reconnect to go on\n\n\r\n0\r\n\r\n$/,
        );
      // The 4 MiB limit, one event and the socket buffers of both ends, not the 88 MiB of events.
      expect(rest.bytes).toBeLessThan(30 * MiB);
      // A reader that keeps up is not dropped.
      const next = await subscribe(server.url);
      next.socket.resume();
      let seen = '';
      next.socket.on('data', (chunk: Buffer) => (seen += chunk.toString('latin1')));
      await run(40);
      await waitFor(() => ((seen.match(/event: request\n/g) ?? []).length >= 40 ? true : undefined));
      expect(seen).not.toContain(': dropped');
      next.socket.destroy();
    } finally {
      await pool.close();
      await server.stop();
    }
  }, 180_000);
});

describe("the event stream's backlog check (fake response, fake timers)", () => {
  test('past the limit the stream is ended with the reason and unsubscribed; a reader that still does not read is cut after 10 s', async () => {
    vi.useFakeTimers();
    try {
      const listeners = new Set<(event: ControlEvent) => void>();
      const plane = {
        subscribe: (l: (event: ControlEvent) => void) => (listeners.add(l), () => listeners.delete(l)),
      } as unknown as ControlPlane;
      const api = createAdminApi(plane, { bindHost: '127.0.0.1', token: undefined });
      const res = Object.assign(new EventEmitter(), {
        writableLength: 0,
        writableEnded: false,
        headersSent: false,
        destroyed: false,
        written: [] as string[],
        writeHead() {
          this.headersSent = true;
        },
        write(text: string) {
          this.written.push(text);
          return true;
        },
        end(text?: string) {
          if (text !== undefined) this.written.push(text);
          this.writableEnded = true;
        },
        destroy() {
          this.destroyed = true;
        },
      });
      const req = Object.assign(new EventEmitter(), {
        method: 'GET',
        url: '/__mockapi/events',
        headers: { host: '127.0.0.1' },
        socket: new EventEmitter(),
      });
      api.handle(req as unknown as IncomingMessage, res as unknown as ServerResponse, '/__mockapi/events');
      await vi.waitFor(() => expect(listeners.size).toBe(1));
      const event: ControlEvent = { type: 'reload', data: { revision: 'r', endpoints: 1 } };
      res.writableLength = EVENT_BACKLOG_LIMIT; // at the limit: still written
      for (const listener of listeners) listener(event);
      expect(res.written.at(-1)).toBe('event: reload\ndata: {"revision":"r","endpoints":1}\n\n');
      res.writableLength = EVENT_BACKLOG_LIMIT + 1;
      for (const listener of listeners) listener(event);
      expect(res.written.at(-1)).toBe(DROPPED);
      expect(DROPPED).toBe(': dropped: this reader fell more than 4 MiB behind; reconnect to go on\n\n');
      expect(res.writableEnded).toBe(true);
      expect(listeners.size).toBe(0);
      vi.advanceTimersByTime(9_999);
      expect(res.destroyed).toBe(false);
      vi.advanceTimersByTime(1);
      expect(res.destroyed).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('mockapi requests -f hears why its stream ended', () => {
  const stream = (...parts: string[]) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const part of parts) controller.enqueue(new TextEncoder().encode(part));
        controller.close();
      },
    });
  const entry = { id: 7, method: 'GET', path: '/mock/a' };

  test('a `: dropped:` comment is told apart from the end of the stream', async () => {
    const seen: unknown[] = [];
    const event = `event: request\ndata: ${JSON.stringify(entry)}\n\n`;
    expect(await readEvents(stream(': mockapi events\n\n', event, DROPPED), (e) => seen.push(e))).toBe('dropped');
    expect(seen).toEqual([entry]);
    expect(await readEvents(stream(': mockapi events\n\n', ': keep-alive\n\n', event), (e) => seen.push(e))).toBe(
      'ended',
    );
    expect(seen).toEqual([entry, entry]);
  });
});
