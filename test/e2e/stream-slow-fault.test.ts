// A stream under a `slow` network fault goes out over time, so it is journaled when it ends, with
// its stream record — as a stream written without a fault — not at once when its head goes out.
// Under the other network faults too, its entry has its stream record: `reset`, `close` and
// `truncate` break it off at once (`ended: reset`, with the events their bytes held), and a `hang`
// is journaled when its connection closes.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { request } from 'node:http';
import { startServe, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin } from '../helpers/control.js';

const KEY = 'mk_streamSlowFault00000000000000001';
const dir = useTempDir('mockapi-stream-slow-');
let serve: ServeProcess;

beforeAll(async () => {
  const file = await writeConfig(
    dir.path,
    `apiKey: ${KEY}
endpoints:
  - method: POST
    path: /v1/chat/completions
    faults: [{ kind: slow, rate: 1, bytesPerSecond: 2000 }]
    response: { stream: { preset: openai-chat, text: "Hello from the mock today.", gap: 0 } }
  - method: GET
    path: /reset
    faults: [{ kind: reset, rate: 1 }]
    response: { stream: { events: [{ data: a }, { data: b }, { data: c }] } }
  - method: GET
    path: /truncate
    faults: [{ kind: truncate, rate: 1, bytes: 12 }]
    response: { stream: { events: [{ data: one }, { data: two }, { data: three }] } }
  - method: GET
    path: /hang
    faults: [{ kind: hang, rate: 1, after: 300ms }]
    response: { stream: { events: [{ data: a }, { data: b }] } }
`,
  );
  serve = await startServe(['-c', file, '--no-state']);
});
afterAll(() => serve?.stop());
beforeEach(async () => {
  expect((await admin(serve.url, 'POST', 'reset', {})).status).toBe(200);
});

/** Posts to the stream; `onFirst` runs at the first piece of its body (return true to leave there). */
function chat(onFirst: () => Promise<boolean>): Promise<{ text: string; ms: number; left: boolean }> {
  const started = performance.now();
  return new Promise((done, fail) => {
    const req = request(`${serve.url}/mock/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    });
    req.on('error', fail);
    req.on('response', (res) => {
      let text = '';
      let first = true;
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (!first) return;
        first = false;
        res.pause();
        onFirst().then((leave) => {
          if (leave) {
            res.destroy();
            done({ text, ms: performance.now() - started, left: true });
          } else res.resume();
        }, fail);
      });
      res.on('end', () => done({ text, ms: performance.now() - started, left: false }));
    });
    req.end('{"model":"gpt-4o"}');
  });
}

const journal = async () => (await admin(serve.url, 'GET', 'requests')).body.requests;

describe('a stream under a slow fault', () => {
  test('is journaled once it has all gone out, with its stream record', async () => {
    const read = await chat(async () => {
      // The client is still reading: nothing is journaled yet.
      expect(await journal()).toEqual([]);
      return false;
    });
    expect(read.left).toBe(false);
    expect(read.text).toContain('data: [DONE]');
    expect(read.ms).toBeGreaterThan(500);
    const [entry] = (await admin(serve.url, 'GET', 'requests/wait?timeout=5s')).body.requests;
    expect(entry).toMatchObject({
      step: 'fault',
      status: 200,
      notes: ['fault: slow (2000 bytes/s)'],
      stream: { events: expect.any(Number), ended: 'complete' },
    });
    expect(entry.stream.sent).toBe(entry.stream.events);
    expect(entry.stream.events).toBeGreaterThan(3);
    expect(entry.stream.firstByteMs).toBeLessThan(entry.stream.ms);
    expect(entry.ms).toBeGreaterThan(500);
    expect(entry.stream.ms).toBe(entry.ms);
  });

  test('a client that leaves part-way: ended client, with the events it was sent', async () => {
    const read = await chat(async () => true);
    expect(read.left).toBe(true);
    const [entry] = (await admin(serve.url, 'GET', 'requests/wait?timeout=5s')).body.requests;
    expect(entry).toMatchObject({ step: 'fault', stream: { ended: 'client' } });
    expect(entry.stream.sent).toBeLessThan(entry.stream.events);
  });
});

/** A GET of `path` that resolves with what arrived, however the connection ended; `leaveAfterMs`: the client leaves then. */
function getRaw(path: string, leaveAfterMs?: number): Promise<{ text: string; error?: string }> {
  return new Promise((done) => {
    let text = '';
    const req = request(`${serve.url}/mock${path}`, { headers: { 'x-api-key': KEY } });
    req.on('error', (err: NodeJS.ErrnoException) => done({ text, error: err.code ?? err.message }));
    req.on('response', (res) => {
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('error', (err: NodeJS.ErrnoException) => done({ text, error: err.code ?? err.message }));
      res.on('end', () => done({ text }));
    });
    if (leaveAfterMs !== undefined) setTimeout(() => req.destroy(), leaveAfterMs);
    req.end();
  });
}

describe('a stream under the other network faults has its stream record', () => {
  test('reset: journaled at once, nothing of it sent', async () => {
    expect((await getRaw('/reset')).error).toBe('ECONNRESET');
    const [entry] = (await admin(serve.url, 'GET', 'requests/wait?timeout=5s')).body.requests;
    expect(entry).toMatchObject({ step: 'fault', notes: ['fault: reset'], responseBody: '' });
    expect(entry.stream).toEqual({ events: 3, sent: 0, ended: 'reset', firstByteMs: null, ms: entry.ms });
  });

  test('truncate: the events its bytes held, the head sent, the bytes written as its body', async () => {
    // "data: one\n\n" is 11 bytes: the first event whole, one byte of the second.
    const read = await getRaw('/truncate');
    expect(read.text).toBe('data: one\n\nd');
    const [entry] = (await admin(serve.url, 'GET', 'requests/wait?timeout=5s')).body.requests;
    expect(entry).toMatchObject({ step: 'fault', notes: ['fault: truncate (12 of 35 bytes)'] });
    expect(entry.responseBody).toBe('data: one\n\nd');
    expect(entry.stream).toEqual({ events: 3, sent: 1, ended: 'reset', firstByteMs: expect.any(Number), ms: entry.ms });
  });

  test('hang: journaled when its `after` closes the connection, or when the client leaves first', async () => {
    const read = await getRaw('/hang');
    expect(read.text).toBe('');
    const [closed] = (await admin(serve.url, 'GET', 'requests/wait?timeout=5s')).body.requests;
    expect(closed).toMatchObject({ step: 'fault', notes: ['fault: hang (closed after 300 ms)'] });
    expect(closed.stream).toEqual({ events: 2, sent: 0, ended: 'reset', firstByteMs: null, ms: closed.ms });
    expect(closed.ms).toBeGreaterThanOrEqual(250);

    expect((await admin(serve.url, 'POST', 'reset', {})).status).toBe(200);
    await getRaw('/hang', 50);
    const [left] = (await admin(serve.url, 'GET', 'requests/wait?timeout=5s')).body.requests;
    expect(left.stream).toEqual({ events: 2, sent: 0, ended: 'client', firstByteMs: null, ms: left.ms });
    expect(left.ms).toBeLessThan(300);
  });
});
