// Black-box tests of streamed answers: the built CLI on port 0, consumed by real clients — the
// `openai` SDK (presets, and its own behaviour on each stream fault) and a spec-conformant SSE
// parser (eventsource-parser) that checks explicit events byte for byte.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { admin } from '../helpers/control.js';
import { startServe, stopAll, tempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_streamTest0000000000000000000001';
const AUTH = { 'x-api-key': KEY };

afterAll(stopAll);

function chat(path: string, extra = ''): string {
  return `  - method: POST
    path: ${path}
    response:
      stream:
        preset: openai-chat
        text: "Hello from the mock."
        gap: 0
${extra}`;
}

const CONFIG = `apiKey: ${KEY}
seed: 42
limits: { rateLimit: { requests: 100000, window: 1m } }
endpoints:
${chat('/v1/chat/completions')}${chat('/cut/v1/chat/completions', '        faults: [{ kind: cut, after: 3, rate: 1 }]\n')}${chat('/reset/v1/chat/completions', '        faults: [{ kind: reset, after: 3, rate: 1 }]\n')}${chat('/error/v1/chat/completions', '        faults: [{ kind: error, after: 2, rate: 1, data: { error: { message: overloaded, type: server_error } } }]\n')}${chat('/stall/v1/chat/completions', '        faults: [{ kind: stall, after: 2, rate: 1, for: 150ms }]\n')}
  - method: POST
    path: /v1/responses
    response:
      stream: { preset: openai-responses, text: "Streaming works, char by char.", chunkBy: char }
  - method: POST
    path: /cut/v1/responses
    response:
      stream: { preset: openai-responses, text: "Cut short here", faults: [{ kind: cut, after: 5, rate: 1 }] }
  - method: POST
    path: /v1/messages
    response:
      stream: { preset: anthropic, text: "Bonjour le monde", chunkBy: 4 }
  - method: GET
    path: /events
    response:
      headers: { x-trace: "\${query.trace}" }
      stream:
        events:
          - { comment: "keep-alive\\nsecond line", event: greet, id: "1", data: "line one\\nline two" }
          - $each: [a, b]
            event: letter
            data: { letter: "\${item}", trace: "\${query.trace}" }
          - { data: "  leading spaces kept" }
          - { data: "[DONE]" }
  - method: GET
    path: /lines
    response:
      stream:
        format: ndjson
        events:
          - $each: [1, 2, 3]
            data: { n: "\${item}" }
  - method: GET
    path: /slow-net
    faults: [{ kind: slow, rate: 1, bytesPerSecond: 2000 }]
    response:
      stream: { events: [{ data: one }, { data: two }] }
  - method: GET
    path: /chunks
    response:
      stream:
        format: chunks
        events: [{ data: "Hel" }, { data: "lo" }, { data: { done: true } }]
  - method: GET
    path: /slow-events
    response:
      stream:
        gap: 40ms
        events:
          - $each: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
            data: "\${item}"
`;

let proc: ServeProcess;

beforeAll(async () => {
  const dir = await tempDir('mockapi-stream-');
  proc = await startServe(['-c', await writeConfig(dir, CONFIG), '--no-state', '--no-watch']);
});

function client(prefix = ''): OpenAI {
  return new OpenAI({ apiKey: KEY, baseURL: `${proc.mock}${prefix}/v1`, maxRetries: 0, timeout: 10_000 });
}

async function chatText(
  prefix: string,
): Promise<{ text: string; finish: Array<string | null>; ids: Set<string>; models: Set<string> }> {
  const stream = await client(prefix).chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
  });
  let text = '';
  const finish: Array<string | null> = [];
  const ids = new Set<string>();
  const models = new Set<string>();
  for await (const chunk of stream) {
    ids.add(chunk.id);
    models.add(chunk.model);
    text += chunk.choices[0]?.delta.content ?? '';
    finish.push(chunk.choices[0]?.finish_reason ?? null);
  }
  return { text, finish, ids, models };
}

/** The requests the journal kept for `path`, newest last. */
async function journalFor(path: string): Promise<any[]> {
  const answer = await admin(proc.url, 'GET', `requests?path=${encodeURIComponent(`/mock${path}`)}`);
  return answer.body.requests as any[];
}

async function raw(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const res = await request(`${proc.mock}${path}`, { headers: { ...AUTH, ...headers } });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

function parseSse(text: string): EventSourceMessage[] {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e) });
  parser.feed(text);
  return events;
}

describe('presets, as the openai SDK reads them', () => {
  test('openai-chat: the full text, finish_reason "stop", one id and the request\'s model on every chunk', async () => {
    const { text, finish, ids, models } = await chatText('');
    expect(text).toBe('Hello from the mock.');
    expect(finish.at(-1)).toBe('stop');
    expect(finish.slice(0, -1).every((f) => f === null)).toBe(true);
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^chatcmpl-[A-Za-z0-9]{24}$/);
    expect([...models]).toEqual(['gpt-4o-mini']);
    const [entry] = (await journalFor('/v1/chat/completions')).slice(-1);
    expect(entry.stream).toMatchObject({ events: 7, sent: 7, ended: 'complete' });
    expect(entry.stream.firstByteMs).toBeGreaterThanOrEqual(0);
    expect(entry.stream.ms).toBeGreaterThanOrEqual(entry.stream.firstByteMs);
  });

  test('cut: the SDK ends the iteration quietly with the text so far and no finish_reason', async () => {
    const { text, finish } = await chatText('/cut');
    expect(text).toBe('Hello from');
    expect(finish).toEqual([null, null, null]);
    const [entry] = (await journalFor('/cut/v1/chat/completions')).slice(-1);
    expect(entry.stream).toMatchObject({ events: 7, sent: 3, ended: 'cut' });
    expect(entry.notes).toEqual(['stream fault: cut after 3 events']);
  });

  test('reset: the SDK raises a connection error mid-stream', async () => {
    let text = '';
    const run = async (): Promise<void> => {
      const stream = await client('/reset').chat.completions.create({ model: 'm', messages: [], stream: true });
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    };
    const error = await run().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(String((error as Error).message) + String((error as { cause?: unknown }).cause)).toMatch(
      /terminated|ECONNRESET|other side closed|socket/i,
    );
    expect(text).toBe('Hello from');
    const [entry] = (await journalFor('/reset/v1/chat/completions')).slice(-1);
    expect(entry.stream).toMatchObject({ events: 7, sent: 3, ended: 'reset' });
  });

  test("error: the SDK throws its APIError with the error event's message", async () => {
    let text = '';
    const run = async (): Promise<void> => {
      const stream = await client('/error').chat.completions.create({ model: 'm', messages: [], stream: true });
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    };
    const error = await run().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain('overloaded');
    expect(text).toBe('Hello');
    const [entry] = (await journalFor('/error/v1/chat/completions')).slice(-1);
    expect(entry.stream).toMatchObject({ events: 7, sent: 2, ended: 'error' });
  });

  test('stall: the stream pauses, then completes; the journal notes the stall', async () => {
    const { text, finish } = await chatText('/stall');
    expect(text).toBe('Hello from the mock.');
    expect(finish.at(-1)).toBe('stop');
    const [entry] = (await journalFor('/stall/v1/chat/completions')).slice(-1);
    expect(entry.stream).toMatchObject({ events: 7, sent: 7, ended: 'complete' });
    expect(entry.notes).toEqual(['stream fault: stall (150 ms after 2 events)']);
  });

  test('openai-responses: the SDK streams every delta and the completed response', async () => {
    const stream = await client().responses.create({ model: 'gpt-4.1', input: 'hi', stream: true });
    let text = '';
    const types: string[] = [];
    let completed: any;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(text).toBe('Streaming works, char by char.');
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types.at(-1)).toBe('response.completed');
    expect(completed.model).toBe('gpt-4.1');
    expect(completed.output_text ?? completed.output[0].content[0].text).toBe('Streaming works, char by char.');
  });

  test('openai-responses, cut: the SDK ends quietly after the deltas sent, without response.completed', async () => {
    const stream = await client('/cut').responses.create({ model: 'gpt-4.1', input: 'hi', stream: true });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
    ]);
  });

  test('anthropic: message_start … message_stop with text deltas of 4 characters', async () => {
    const res = await request(`${proc.mock}/v1/messages`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-x', stream: true }),
    });
    const events = parseSse(await res.body.text());
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const deltas = events.filter((e) => e.event === 'content_block_delta').map((e) => JSON.parse(e.data).delta.text);
    expect(deltas).toEqual(['Bonj', 'our ', 'le m', 'onde']);
    expect(JSON.parse(events[0]!.data).message.model).toBe('claude-x');
    expect(JSON.parse(events.at(-2)!.data).delta.stop_reason).toBe('end_turn');
  });
});

describe('explicit events', () => {
  test('SSE framing byte for byte, headers of a stream, and what a conformant parser reads', async () => {
    const got = await raw('/events?trace=t-1');
    expect(got.status).toBe(200);
    expect(got.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(got.headers['cache-control']).toBe('no-cache');
    expect(got.headers['transfer-encoding']).toBe('chunked');
    expect(got.headers['content-length']).toBeUndefined();
    expect(got.headers['x-trace']).toBe('t-1');
    expect(got.text).toBe(
      ': keep-alive\n: second line\nevent: greet\nid: 1\ndata: line one\ndata: line two\n\n' +
        'event: letter\ndata: {"letter":"a","trace":"t-1"}\n\n' +
        'event: letter\ndata: {"letter":"b","trace":"t-1"}\n\n' +
        'data:   leading spaces kept\n\n' +
        'data: [DONE]\n\n',
    );
    const events = parseSse(got.text);
    expect(events).toEqual([
      { event: 'greet', id: '1', data: 'line one\nline two' },
      { event: 'letter', id: undefined, data: '{"letter":"a","trace":"t-1"}' },
      { event: 'letter', id: undefined, data: '{"letter":"b","trace":"t-1"}' },
      { event: undefined, id: undefined, data: '  leading spaces kept' },
      { event: undefined, id: undefined, data: '[DONE]' },
    ]);
  });

  test('ndjson: one JSON value a line, application/x-ndjson', async () => {
    const got = await raw('/lines');
    expect(got.headers['content-type']).toBe('application/x-ndjson');
    expect(got.text).toBe('{"n":1}\n{"n":2}\n{"n":3}\n');
  });

  test('chunks: the data alone, text/plain', async () => {
    const got = await raw('/chunks');
    expect(got.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(got.text).toBe('Hello{"done":true}');
  });

  test("a network fault on a streamed answer acts on the whole stream's bytes (slow: all of it, slowly)", async () => {
    const got = await raw('/slow-net');
    expect(got.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(got.text).toBe('data: one\n\ndata: two\n\n');
    const [entry] = (await journalFor('/slow-net')).slice(-1);
    expect(entry.step).toBe('fault');
    expect(entry.notes).toEqual(['fault: slow (2000 bytes/s)']);
  });

  test('a client that leaves mid-stream: the journal says "client" with the events sent so far', async () => {
    const controller = new AbortController();
    const res = await request(`${proc.mock}/slow-events`, { headers: AUTH, signal: controller.signal });
    const reader = res.body[Symbol.asyncIterator]();
    await reader.next(); // the first event
    controller.abort();
    await expect(reader.next()).rejects.toThrow();
    let entry: any;
    for (let i = 0; i < 100 && entry?.stream?.ended !== 'client'; i++) {
      [entry] = (await journalFor('/slow-events')).slice(-1);
      if (entry?.stream?.ended !== 'client') await new Promise((r) => setTimeout(r, 20));
    }
    expect(entry.stream.ended).toBe('client');
    expect(entry.stream.sent).toBeLessThan(10);
    expect(entry.stream.events).toBe(10);
  });

  test('a stream carries the limit headers and counts once for the limits', async () => {
    const first = await raw('/slow-events');
    const second = await raw('/lines');
    expect(first.headers['ratelimit-limit']).toBe('100000');
    expect(Number(first.headers['ratelimit-remaining']) - Number(second.headers['ratelimit-remaining'])).toBe(1);
  });
});

describe('the endpoints listing and determinism', () => {
  test('GET /__mockapi/endpoints shows a preset expanded into its events', async () => {
    const { body } = await admin(proc.url, 'GET', 'endpoints');
    const info = (body.endpoints ?? body).find((e: any) => e.endpoint === 'POST /v1/chat/completions');
    const stream = info.answerDetails[0].stream;
    expect(stream.preset).toBe('openai-chat');
    expect(stream.gap).toBe(0);
    expect(stream.events).toHaveLength(7);
    expect(stream.events[1].data.choices[0].delta).toEqual({ content: 'Hello' });
    expect(stream.events[6]).toEqual({ data: '[DONE]' });
  });

  test("with the same seed, another server's first stream has the same id", async () => {
    const dir = await tempDir('mockapi-stream-');
    const other = await startServe(['-c', await writeConfig(dir, CONFIG), '--no-state', '--no-watch']);
    const ids: string[] = [];
    for (const url of [other.mock, `${other.mock}`]) {
      const res = await request(`${url}/v1/messages`, { method: 'POST', headers: AUTH, body: '{}' });
      ids.push(JSON.parse(parseSse(await res.body.text())[0]!.data).message.id);
    }
    const first = (await journalFor('/v1/messages'))[0];
    expect(JSON.parse(parseSse(first.responseBody)[0]!.data).message.id).toBe(ids[0]);
    expect(ids[1]).not.toBe(ids[0]);
    await other.stop();
  });
});
