// Unit tests of src/stream: framing, chunking, preset expansion and the seeded timing of a stream.
import { describe, expect, test, vi } from 'vitest';
import { createAnswerRandom, type RequestContext } from '../../src/expression/index.js';
import { compileStream } from '../../src/stream/compile.js';
import { eager, placeFault } from '../../src/stream/rendered.js';
import { frameEvent } from '../../src/stream/frame.js';
import { buildStream } from '../../src/config/stream-model.js';
import { streamOutline } from '../../src/stream/outline.js';
import { framePreset } from '../../src/stream/preset-frame.js';
import { presetEvents, presetParts } from '../../src/stream/presets.js';
import { chunkText } from '../../src/config/stream-text.js';

function ctx(request: number, body?: unknown): RequestContext {
  return {
    params: {},
    query: { q: 'x' },
    headers: {},
    cookies: {},
    body,
    request,
    state: {},
    now: Date.UTC(2026, 0, 1),
    random: createAnswerRandom(1, 'GET /s', request),
  };
}
const timing = (n: number) => createAnswerRandom(7, 'GET /s\u0000stream\u0000response', n);

describe('framing', () => {
  test('SSE: a comment line per line, event and id on one line, a data line per line of text (any line break), a blank line at the end', () => {
    expect(frameEvent('sse', { comment: 'a\nb', event: 'x\ny', id: 'i\r1', data: 'one\r\ntwo\rthree\nfour' })).toBe(
      ': a\n: b\nevent: xy\nid: i1\ndata: one\ndata: two\ndata: three\ndata: four\n\n',
    );
    expect(frameEvent('sse', { data: { a: [1, 'b'] } })).toBe('data: {"a":[1,"b"]}\n\n');
    expect(frameEvent('sse', { data: '[DONE]' })).toBe('data: [DONE]\n\n');
    expect(frameEvent('sse', { data: '' })).toBe('data: \n\n');
  });

  test('NDJSON writes JSON lines; chunks the text alone', () => {
    expect(frameEvent('ndjson', { data: 'text' })).toBe('"text"\n');
    expect(frameEvent('ndjson', { data: { n: 1 } })).toBe('{"n":1}\n');
    expect(frameEvent('chunks', { data: 'raw\ntext' })).toBe('raw\ntext');
  });
});

describe('chunking', () => {
  test('by word (with the spaces before it), by character (code points), by n characters', () => {
    expect(chunkText('Hello from  the mock.', 'word')).toEqual(['Hello', ' from', '  the', ' mock.']);
    expect(chunkText('a😀b', 'char')).toEqual(['a', '😀', 'b']);
    expect(chunkText('abcdefg', 3)).toEqual(['abc', 'def', 'g']);
    expect(chunkText('', 'word')).toEqual([]);
  });
});

describe('seeded timing', () => {
  const plan = compileStream(
    buildStream({
      firstByte: { median: '300ms', p99: '1200ms' },
      gap: { min: '20ms', max: '60ms' },
      events: [
        { $each: [1, 2, 3, 4, 5], data: '${item} ${query.q}' },
        { data: 'end', gap: '5ms' },
      ],
    }),
    {},
  );

  test('the n-th stream has the same events at the same offsets; another n draws other waits', () => {
    const a = plan.render(ctx(3), timing(3));
    const b = plan.render(ctx(3), timing(3));
    expect(a.chunks).toEqual([
      'data: 1 x\n\n',
      'data: 2 x\n\n',
      'data: 3 x\n\n',
      'data: 4 x\n\n',
      'data: 5 x\n\n',
      'data: end\n\n',
    ]);
    expect(b.chunks).toEqual(a.chunks);
    expect(b.waits).toEqual(a.waits);
    expect(a.waits.slice(1, 5).every((w) => w >= 20 && w <= 60)).toBe(true);
    expect(a.waits[5]).toBe(5);
    expect(plan.render(ctx(4), timing(4)).waits).not.toEqual(a.waits);
  });

  test('a fault `after` a duration acts after the events due before it', () => {
    const r = eager(['a', 'b', 'c'], [100, 50, 50], () => '');
    expect(placeFault({ kind: 'cut', rate: 1, afterMs: 120 }, r).after).toBe(1);
    expect(placeFault({ kind: 'cut', rate: 1, afterMs: 10_000 }, r).after).toBe(3);
    expect(placeFault({ kind: 'cut', rate: 1, afterEvents: 2 }, r).after).toBe(2);
  });

  test("a preset: one id, one time and the request's model on every chunk", () => {
    const chat = compileStream(buildStream({ preset: 'openai-chat', text: 'Hi there' }), {});
    const chunks = chat
      .render(ctx(1, { model: 'gpt-x' }), timing(1))
      .chunks.slice(0, -1)
      .map((c) => JSON.parse(c.slice('data: '.length)));
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(new Set(chunks.map((c) => c.created))).toEqual(new Set([Date.UTC(2026, 0, 1) / 1000]));
    expect(new Set(chunks.map((c) => c.model))).toEqual(new Set(['gpt-x']));
    expect(chat.render(ctx(1), timing(1)).chunks[0]).toContain('"model":"mock-model"');
  });
});

describe('$each', () => {
  test('an item stands for ${item} (keeping its type) and ${item.field}; items are literal, never expressions', () => {
    const stream = buildStream({
      events: [
        {
          $each: [{ n: 1, name: 'a' }, '${query.q}', { name: '${query.q}' }],
          data: { all: '${item}', n: '${item.n}', text: 'name: ${item.name}' },
        },
      ],
    });
    expect(stream.events.map((e) => e.data)).toEqual([
      { all: { n: 1, name: 'a' }, n: 1, text: 'name: a' },
      { all: '$${query.q}', n: undefined, text: 'name: ' },
      { all: { name: '$${query.q}' }, n: undefined, text: 'name: $${query.q}' },
    ]);
    const plan = compileStream(stream, {});
    expect(plan.render(ctx(1), timing(1)).chunks.slice(1)).toEqual([
      'data: {"all":"${query.q}","text":"name: "}\n\n',
      'data: {"all":{"name":"${query.q}"},"text":"name: ${query.q}"}\n\n',
    ]);
  });
});

describe('the endpoints listing', () => {
  test('shows a preset expanded into its events, with placeholders for what each stream draws', () => {
    const outline = streamOutline(buildStream({ preset: 'anthropic', text: 'Hi you', gap: '10ms' }));
    expect(outline.format).toBe('sse');
    expect(outline.gap).toBe(10);
    expect(outline.events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect((outline.events[0]!.data as any).message.model).toBe("<the request's model, else mock-model>");
    expect((outline.events[3]!.data as any).delta.text).toBe('Hi');
  });

  test('the model round-trips through JSON (a recorded stream is written back as explicit events)', () => {
    const stream = buildStream({
      format: 'ndjson',
      events: [{ data: { a: 1 }, gap: '1s' }],
      faults: [{ kind: 'stall', rate: 0.5, after: '2s', for: '3s' }],
    });
    expect(JSON.parse(JSON.stringify(stream))).toEqual(stream);
    expect(stream).toEqual({
      format: 'ndjson',
      events: [{ data: { a: 1 }, gapMs: 1000 }],
      faults: [{ kind: 'stall', rate: 0.5, afterMs: 2000, forMs: 3000 }],
    });
  });
});

describe('the writer and a slow reader', () => {
  test('nothing more is written while the socket is full; later events wait for drain, and the journal note says so', async () => {
    vi.useFakeTimers();
    const { EventEmitter } = await import('node:events');
    const { startStream } = await import('../../src/stream/writer.js');
    const writes: string[] = [];
    let full = true;
    const res = Object.assign(new EventEmitter(), {
      writeHead: () => undefined,
      flushHeaders: () => undefined,
      write(chunk: string) {
        writes.push(chunk);
        return !full; // the first write fills the buffer
      },
      end(chunk?: string) {
        if (chunk) writes.push(chunk);
      },
      socket: null,
    });
    const ended = new Promise<{ summary: any; notes: readonly string[] }>((done) => {
      startStream({
        res: res as never,
        status: 200,
        headers: [],
        rendered: eager(['a', 'b', 'c', 'd'], [0, 0, 1, 0], () => ''),
        headOnly: false,
        started: performance.now(),
        onEnd: (summary, _written, notes) => done({ summary, notes }),
      });
    });
    expect(writes).toEqual(['ab']); // the events due together go out in one write, which fills the buffer
    vi.advanceTimersByTime(50); // 'c' was due 1 ms later, but the buffer is still full
    expect(writes).toEqual(['ab']);
    full = false;
    res.emit('drain');
    vi.advanceTimersByTime(1);
    vi.useRealTimers();
    const { summary, notes } = await ended;
    expect(writes).toEqual(['ab', 'cd']);
    expect(summary).toMatchObject({ events: 4, sent: 4, ended: 'complete' });
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/^stream: the client read slowly; later events went out \d+ ms late$/);
    expect(res.listenerCount('close') + res.listenerCount('drain')).toBe(0);
  });
});

describe('the writer and stream faults', () => {
  async function run(fault: Parameters<typeof placeFault>[0], waits: number[]) {
    const { EventEmitter } = await import('node:events');
    const { startStream } = await import('../../src/stream/writer.js');
    const log: string[] = [];
    const res = Object.assign(new EventEmitter(), {
      writeHead: () => log.push('head'),
      flushHeaders: () => log.push('flush'),
      write: (chunk: string) => (log.push(chunk), true),
      end: (chunk?: string) => void log.push(`end:${chunk ?? ''}`),
      socket: null,
    });
    let summary: any;
    const rendered = eager(['a', 'b', 'c'], waits, () => 'E');
    startStream({
      res: res as never,
      status: 200,
      headers: [],
      rendered,
      fault: placeFault(fault, rendered),
      headOnly: false,
      started: performance.now(),
      onEnd: (s) => (summary = s),
    });
    return { log, summary: () => summary };
  }

  test('a cut acts when the next event would have been due, in its place', async () => {
    vi.useFakeTimers();
    const { log, summary } = await run({ kind: 'cut', rate: 1, afterEvents: 1 }, [0, 100, 100]);
    expect(log).toEqual(['head', 'a']);
    vi.advanceTimersByTime(99);
    expect(log).toEqual(['head', 'a']);
    vi.advanceTimersByTime(1);
    expect(log).toEqual(['head', 'a', 'end:']);
    expect(summary()).toMatchObject({ events: 3, sent: 1, ended: 'cut' });
    vi.useRealTimers();
  });

  test('a stall pauses in place of the next event, then the rest follows at its gaps', async () => {
    vi.useFakeTimers();
    const { log, summary } = await run({ kind: 'stall', rate: 1, afterEvents: 1, forMs: 500 }, [0, 100, 100]);
    vi.advanceTimersByTime(599);
    expect(log).toEqual(['head', 'a']);
    vi.advanceTimersByTime(1);
    expect(log).toEqual(['head', 'a', 'b']);
    vi.advanceTimersByTime(100);
    expect(log).toEqual(['head', 'a', 'b', 'end:c']);
    expect(summary()).toMatchObject({ events: 3, sent: 3, ended: 'complete' });
    vi.useRealTimers();
  });

  test('an error after 0 events: the head, the error event, the end', async () => {
    vi.useFakeTimers();
    const { log, summary } = await run({ kind: 'error', rate: 1, afterEvents: 0 }, [50, 10, 10]);
    vi.advanceTimersByTime(50);
    expect(log).toEqual(['head', 'flush', 'end:E']);
    expect(summary()).toMatchObject({ sent: 0, ended: 'error' });
    vi.useRealTimers();
  });
});

describe('the cost of gap: 0', () => {
  test('a stream without expressions or latency shapes is framed once at load and written whole in one end()', async () => {
    const plan = compileStream(
      buildStream({ gap: 0, events: [{ $each: [1, 2, 3], data: { n: '${item}' } }, { data: '[DONE]' }] }),
      {},
    );
    const a = plan.render(ctx(1), timing(1));
    const b = plan.render(ctx(2), timing(2));
    expect(a.whole?.text).toBe('data: {"n":1}\n\ndata: {"n":2}\n\ndata: {"n":3}\n\ndata: [DONE]\n\n');
    expect(a.whole?.bytes.toString()).toBe(a.whole?.text);
    expect(a.chunks.join('')).toBe(a.whole?.text);
    expect([b.chunks, b.waits, b.whole]).toEqual([a.chunks, a.waits, a.whole]);
    expect(b.whole).toBe(a.whole); // made once, shared by every request

    const { EventEmitter } = await import('node:events');
    const { startStream } = await import('../../src/stream/writer.js');
    const log: unknown[] = [];
    const res = Object.assign(new EventEmitter(), {
      writeHead: () => log.push('head'),
      flushHeaders: () => log.push('flush'),
      write: (c: unknown) => (log.push(c), true),
      end: (c?: unknown) => void log.push(c),
      socket: null,
    });
    let summary: any;
    let written = '';
    startStream({
      res: res as never,
      status: 200,
      headers: [],
      rendered: a,
      headOnly: false,
      started: performance.now(),
      onEnd: (s, w) => ((summary = s), (written = w)),
    });
    // Ended as any answer is, with the loop turn's other answers (http/write-batch.ts); no listener left behind.
    expect(res.listenerCount('close')).toBe(0);
    expect(log).toEqual(['head']);
    await new Promise((done) => setImmediate(done));
    expect(log).toEqual(['head', a.whole?.bytes]);
    expect(summary).toMatchObject({ events: 4, sent: 4, ended: 'complete' });
    expect(written).toBe(a.whole?.text);
  });

  test('an expression, a latency shape or a wait between events: framed per request, as before', () => {
    const streams = [
      { gap: 0, events: [{ data: '${query.q}' }, { data: 'b' }] },
      { gap: { min: '0ms', max: '5ms' }, events: [{ data: 'a' }, { data: 'b' }] },
      { firstByte: { median: '1ms', p99: '2ms' }, events: [{ data: 'a' }] },
      { events: [{ data: 'a' }, { data: 'b', gap: '1ms' }] },
      { preset: 'openai-chat', text: 'Hi', gap: 0 },
    ];
    for (const stream of streams)
      expect(compileStream(buildStream(stream as never), {}).render(ctx(1), timing(1)).whole).toBeUndefined();
    // A firstByte wait alone keeps the stream whole: everything goes out together after it.
    expect(
      compileStream(buildStream({ firstByte: '5ms', events: [{ data: 'a' }, { data: 'b' }] }), {}).render(
        ctx(1),
        timing(1),
      ).whole?.text,
    ).toBe('data: a\n\ndata: b\n\n');
  });
});

describe('preset framing', () => {
  test('a chunk event framed from one template is byte for byte the event framed alone, for every preset and any text', () => {
    const texts = [
      [],
      ['a'],
      ['Hel', 'lo', ' "quoted"', ' line\nbreak\r\n', ' \u2028sep', ' 😀', ' \\back', ' </script>', ' \u0000nul'],
    ];
    const models = [
      'gpt-x',
      'a "model"\nwith lines',
      '\u0000mockapi chunk text\u0000',
      '\u0000mockapi chunk index\u0000',
    ];
    for (const preset of ['openai-chat', 'openai-responses', 'anthropic'] as const) {
      for (const chunks of texts) {
        for (const model of models) {
          const vars = { id: 'abc', created: 1767225600, model };
          const slow = presetEvents(preset, chunks, vars, undefined).map((e) => frameEvent('sse', e));
          expect(
            framePreset(presetParts(preset, chunks, vars, undefined), chunks, (e) => frameEvent('sse', e)),
          ).toEqual(slow);
        }
      }
    }
  });
});
