// A stream under a `slow` network fault goes out over time, so it is journaled when it ends, with
// its stream record — as a stream written without a fault — not at once when its head goes out.
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
