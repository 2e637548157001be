// Black-box tests of the rules of streamed answers not covered by test/e2e/stream.test.ts: CORS and
// limits on streams, HEAD, at most one fault a request, determinism with a seed across servers
// (and `gap: 0` leaving the content alone), a pipelined answer before a stream, and the CLI's
// graceful stop ending an open stream at once.
import { connect } from 'node:net';
import OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { admin } from '../helpers/control.js';
import { startServe, stopAll, tempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_streamRules000000000000000000001';
const AUTH = { 'x-api-key': KEY };

afterAll(stopAll);

/** The config; `gap` is the latency shape of the seeded streams (`0` in CI). */
function config(gap: string): string {
  return `apiKey: ${KEY}
seed: 11
limits: { rateLimit: { requests: 1000, window: 1m }, monthlyQuota: 100000 }
endpoints:
  - method: GET
    path: /ten
    response:
      stream: { gap: 2ms, events: [{ $each: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], data: "\${item}" }] }
  - method: GET
    path: /long
    response:
      stream: { gap: 1h, events: [{ data: first }, { data: later }] }
  - method: GET
    path: /plain
    response: { body: { plain: true } }
  - method: GET
    path: /net-fault
    faults: [{ kind: close, rate: 1 }]
    response:
      stream: { events: [{ data: a }, { data: b }], faults: [{ kind: cut, after: 1, rate: 1 }] }
  - method: GET
    path: /one-fault
    response:
      stream:
        events: [{ data: a }, { data: b }, { data: c }]
        faults: [{ kind: cut, after: 1, rate: 0.5 }, { kind: error, after: 2, rate: 0.5, data: oops }]
  - method: POST
    path: /seeded
    response:
      stream:
        preset: openai-chat
        text: "Roll \${randomInt(1, 1000)} for \${uuid()}"
        firstByte: ${gap === '0' ? '0' : '{ median: 3ms, p99: 9ms }'}
        gap: ${gap}
        faults: [{ kind: cut, after: 3, rate: 0.3 }, { kind: error, after: 2, rate: 0.3 }]
  - method: POST
    path: /v1/chat/completions
    responses:
      - when: { body.stream: true }
        stream: { preset: openai-chat, text: "Streamed hello.", gap: ${gap} }
      - body:
          id: chatcmpl-mock
          object: chat.completion
          created: 1
          model: "\${body.model}"
          choices: [{ index: 0, message: { role: assistant, content: "Whole hello." }, finish_reason: stop }]
  - method: GET
    path: /seeded-events
    response:
      stream:
        gap: ${gap}
        events:
          - { id: "\${request}", data: { pick: "\${randomInt(1, 1000000)}", id: "\${uuid()}" } }
          - { data: "\${fake.person.firstName()}" }
`;
}

let proc: ServeProcess;

beforeAll(async () => {
  const dir = await tempDir('mockapi-stream-rules-');
  proc = await startServe(['-c', await writeConfig(dir, config('{ min: 1ms, max: 4ms }')), '--no-state', '--no-watch']);
});

async function get(path: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' | 'POST' = 'GET') {
  const res = await request(`${proc.mock}${path}`, {
    method,
    headers: { ...AUTH, ...headers },
    ...(method === 'POST' ? { body: '{}' } : {}),
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

async function journal(server: ServeProcess, path: string): Promise<any[]> {
  return (await admin(server.url, 'GET', `requests?path=${encodeURIComponent(`/mock${path}`)}`)).body.requests as any[];
}

describe('a stream is an answer like any other', () => {
  test('CORS: the Origin echoed, Vary, and the limit headers exposed', async () => {
    const got = await get('/ten', { origin: 'http://app.test' });
    expect(got.headers['access-control-allow-origin']).toBe('http://app.test');
    expect(got.headers.vary).toBe('Origin');
    expect(got.headers['access-control-expose-headers']).toBe(
      'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After',
    );
    expect(got.headers['ratelimit-limit']).toBe('1000');
    expect(got.text).toBe([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((n) => `data: ${n}\n\n`).join(''));
  });

  test('a stream of ten events is one request for the rate limit and the monthly quota', async () => {
    const before = (await admin(proc.url, 'GET', 'usage')).body;
    const first = await get('/ten');
    const second = await get('/ten');
    const after = (await admin(proc.url, 'GET', 'usage')).body;
    expect(Number(first.headers['ratelimit-remaining']) - Number(second.headers['ratelimit-remaining'])).toBe(1);
    expect(after.requests - before.requests).toBe(2);
    expect(before.remaining - after.remaining).toBe(2);
  });

  test('HEAD: the head of the stream, no body; journaled as a complete stream with none of its events sent', async () => {
    const got = await get('/ten', {}, 'HEAD');
    expect(got.status).toBe(200);
    expect(got.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(got.headers['cache-control']).toBe('no-cache');
    expect(got.headers['content-length']).toBeUndefined();
    expect(got.text).toBe('');
    const [entry] = (await journal(proc, '/ten')).filter((e) => e.method === 'HEAD');
    expect(entry.responseBody).toBe('');
    expect({ ...entry.stream, firstByteMs: 0, ms: 0 }).toEqual({
      events: 10,
      sent: 0,
      ended: 'complete',
      firstByteMs: 0,
      ms: 0,
    });
  });

  test('HTTP/1.1 pipelining: the answers before and after a stream go out in order, whole', async () => {
    const socket = connect(Number(new URL(proc.url).port), '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    const head = (path: string) => `GET /mock${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\n\r\n`;
    socket.write(head('/plain') + head('/ten') + head('/plain'));
    await waitFor(
      () => ((text.match(/HTTP\/1\.1 200/g) ?? []).length === 3 && text.endsWith('{"plain":true}') ? true : undefined),
      5000,
    );
    socket.destroy();
    const plainAt = text.indexOf('{"plain":true}');
    expect(plainAt).toBeGreaterThan(0);
    expect(plainAt).toBeLessThan(text.indexOf('text/event-stream'));
    expect(text.indexOf('data: 10\n\n')).toBeLessThan(text.lastIndexOf('{"plain":true}'));
  });
});

describe('one endpoint, streamed when the request asks', () => {
  test('`when: { body.stream: true }`: the openai SDK gets the stream with stream: true, the whole answer without', async () => {
    const client = new OpenAI({ apiKey: KEY, baseURL: `${proc.mock}/v1`, maxRetries: 0, timeout: 10_000 });
    const whole = await client.chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] });
    expect(whole.choices[0]?.message.content).toBe('Whole hello.');
    expect(whole.model).toBe('gpt-x');
    const stream = await client.chat.completions.create({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    let text = '';
    const models = new Set<string>();
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      models.add(chunk.model);
    }
    expect(text).toBe('Streamed hello.');
    expect(models).toEqual(new Set(['gpt-x']));
  });
});

describe('stream faults', () => {
  test('a network fault drawn for the request replaces the stream fault: at most one fault a request', async () => {
    await expect(get('/net-fault')).rejects.toThrow();
    const [entry] = await waitFor(async () => {
      const entries = await journal(proc, '/net-fault');
      return entries.length > 0 ? entries : undefined;
    });
    expect(entry.step).toBe('fault');
    expect(entry.notes).toEqual(['fault: close']);
    // The stream's record says nothing of it was sent: the connection broke off before its head.
    expect(entry.stream).toEqual({ events: 2, sent: 0, ended: 'reset', firstByteMs: null, ms: expect.any(Number) });
  });

  test('two stream faults of rate 0.5: every stream gets exactly one of them', async () => {
    const bodies = await Promise.all(Array.from({ length: 12 }, () => get('/one-fault').then((r) => r.text)));
    for (const body of bodies)
      expect(['data: a\n\n', 'data: a\n\ndata: b\n\nevent: error\ndata: oops\n\n']).toContain(body);
    const entries = await journal(proc, '/one-fault');
    expect(entries).toHaveLength(12);
    for (const e of entries) {
      expect(e.notes.filter((n: string) => n.startsWith('stream fault:'))).toHaveLength(1);
      expect(['cut', 'error']).toContain(e.stream.ended);
    }
  });
});

describe('determinism with a seed', () => {
  test('another server with the same seed sends the same streams, faults included; with gap: 0 too', async () => {
    const read = async (server: ServeProcess) => {
      const out: string[] = [];
      for (let i = 0; i < 6; i++) {
        const chat = await request(`${server.mock}/seeded`, { method: 'POST', headers: AUTH, body: '{"model":"m"}' });
        out.push(await chat.body.text());
        out.push(await (await request(`${server.mock}/seeded-events`, { headers: AUTH })).body.text());
      }
      const ended = (await journal(server, '/seeded')).map(
        (e) => `${e.stream.ended} ${e.stream.sent}/${e.stream.events}`,
      );
      // `created` is the time of the answer, not a seeded value: the two servers may answer in different seconds.
      const now = Math.floor(Date.now() / 1000);
      for (const created of out.join('').matchAll(/"created":(\d+)/g))
        expect(Math.abs(Number(created[1]) - now)).toBeLessThanOrEqual(60);
      return { out: out.map((text) => text.replace(/"created":\d+/g, '"created":"<time>"')), ended };
    };
    const dirs = [await tempDir('mockapi-stream-rules-'), await tempDir('mockapi-stream-rules-')];
    const same = await startServe([
      '-c',
      await writeConfig(dirs[0]!, config('{ min: 1ms, max: 4ms }')),
      '--no-state',
      '--no-watch',
    ]);
    const fast = await startServe(['-c', await writeConfig(dirs[1]!, config('0')), '--no-state', '--no-watch']);
    const [a, b, c] = [await read(same), await read(fast), await read(same)];
    // The third read is the same server's next streams: other ids, the proof that the first two matched by seed.
    expect(b).toEqual(a);
    expect(c.out[0]).not.toBe(a.out[0]);
    expect(new Set(a.ended.map((e) => e.split(' ')[0]))).toEqual(new Set(['complete', 'cut', 'error']));
    await Promise.all([same.stop(), fast.stop()]);
  });
});

describe('a graceful stop', () => {
  test('SIGTERM ends an open stream at once, and serve exits 0', async () => {
    const dir = await tempDir('mockapi-stream-rules-');
    const server = await startServe(['-c', await writeConfig(dir, config('0')), '--no-state', '--no-watch']);
    const res = await request(`${server.mock}/long`, { headers: AUTH });
    const body = res.body[Symbol.asyncIterator]();
    expect(Buffer.from((await body.next()).value as Uint8Array).toString()).toBe('data: first\n\n');
    const stopped = server.stop('SIGTERM');
    const rest = (async () => {
      for (;;) if ((await body.next()).done) return 'ended';
    })().catch(() => 'ended');
    // Generous bounds: without the stop, the next event is an hour away.
    const within = <T>(p: Promise<T>) =>
      Promise.race([p, new Promise<string>((r) => setTimeout(r, 5000, 'still open'))]);
    expect(await within(rest)).toBe('ended');
    expect(await within(stopped)).toBe(0);
  });
});
