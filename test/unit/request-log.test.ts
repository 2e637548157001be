import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestLogger, type RequestLogEntry, type RequestLoggerOptions } from '../../src/http/request-log.js';
import { createRedactor } from '../../src/redact/redactor.js';

/** A stdout stand-in: records every write and answers write() with `accepting`. */
class FakeStream extends EventEmitter {
  writes: string[] = [];
  accepting = true;
  write(chunk: string): boolean {
    this.writes.push(chunk);
    return this.accepting;
  }
  get text(): string {
    return this.writes.join('');
  }
  get lines(): string[] {
    return this.text.split('\n').filter((line) => line !== '');
  }
}

// 2023-11-14T22:13:20.123Z
const NOW = 1_700_000_000_123;
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function setup(options: Partial<RequestLoggerOptions> = {}) {
  const stream = new FakeStream();
  let now = NOW;
  const logger = createRequestLogger({
    format: 'pretty',
    stream: stream as unknown as NodeJS.WritableStream,
    clock: () => now,
    ...options,
  });
  return { stream, logger, advance: (ms: number) => (now += ms) };
}

const entry = (extra: Partial<RequestLogEntry> = {}): RequestLogEntry => ({
  method: 'GET',
  path: '/mock/users/42',
  status: 200,
  durationMs: 3.2,
  ...extra,
});

let savedTz: string | undefined;
beforeAll(() => {
  savedTz = process.env.TZ;
  process.env.TZ = 'UTC';
});
afterAll(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

describe('pretty format', () => {
  it('writes one plain line per request without colour', async () => {
    const { stream, logger } = setup({ color: false });
    logger.log(entry());
    await turn();
    expect(stream.text).toBe('22:13:20 GET /mock/users/42 200 3ms\n');
  });

  it('appends the note in parentheses', async () => {
    const { stream, logger } = setup();
    logger.log(entry({ path: '/mock/user/42', status: 404, durationMs: 0.4, note: 'did you mean GET /users/:id?' }));
    await turn();
    expect(stream.text).toBe('22:13:20 GET /mock/user/42 404 0ms (did you mean GET /users/:id?)\n');
  });

  it.each([
    [200, '\x1b[32m200\x1b[39m'],
    [201, '\x1b[32m201\x1b[39m'],
    [304, '\x1b[36m304\x1b[39m'],
    [401, '\x1b[33m401\x1b[39m'],
    [429, '\x1b[33m429\x1b[39m'],
    [500, '\x1b[31m500\x1b[39m'],
    [503, '\x1b[31m503\x1b[39m'],
  ])('colours status %i by class and dims the time', async (status, painted) => {
    const { stream, logger } = setup({ color: true });
    logger.log(entry({ status }));
    await turn();
    expect(stream.text).toBe(`\x1b[2m22:13:20\x1b[22m GET /mock/users/42 ${painted} 3ms\n`);
  });

  it('uses no escape codes at all when colour is off', async () => {
    const { stream, logger } = setup({ color: false });
    for (const status of [200, 301, 404, 500]) logger.log(entry({ status, note: 'simulated failure' }));
    await turn();
    expect(stream.text).not.toContain('\x1b');
  });

  it('follows the clock', async () => {
    const { stream, logger, advance } = setup();
    logger.log(entry());
    advance(61_000);
    logger.log(entry());
    await turn();
    expect(stream.lines.map((line) => line.slice(0, 8))).toEqual(['22:13:20', '22:14:21']);
  });

  it.each([
    [2.6, '3ms'],
    [0, '0ms'],
    [-5, '0ms'],
    [Number.NaN, '0ms'],
    [1234.4, '1234ms'],
  ])('rounds a duration of %s to %s', async (durationMs, shown) => {
    const { stream, logger } = setup();
    logger.log(entry({ durationMs }));
    await turn();
    expect(stream.text).toBe(`22:13:20 GET /mock/users/42 200 ${shown}\n`);
  });

  it('escapes control characters so a path cannot forge lines or move the cursor', async () => {
    const { stream, logger } = setup();
    logger.log(entry({ path: '/mock/a\nb\x1b[2J\u009bc' }));
    await turn();
    expect(stream.text).toBe('22:13:20 GET /mock/a\\x0ab\\x1b[2J\\x9bc 200 3ms\n');
  });
});

describe('json format', () => {
  it('writes one object per line with exactly the documented fields', async () => {
    const { stream, logger } = setup({ format: 'json' });
    logger.log(entry({ durationMs: 3.14159 }));
    logger.log(
      entry({ method: 'POST', path: '/mock/orders', status: 500, durationMs: 120, note: 'simulated failure' }),
    );
    await turn();
    expect(stream.lines.map((line) => JSON.parse(line))).toEqual([
      { time: '2023-11-14T22:13:20.123Z', method: 'GET', path: '/mock/users/42', status: 200, ms: 3.142 },
      {
        time: '2023-11-14T22:13:20.123Z',
        method: 'POST',
        path: '/mock/orders',
        status: 500,
        ms: 120,
        note: 'simulated failure',
      },
    ]);
  });

  it('keeps keys in order and valid JSON for odd characters', async () => {
    const { stream, logger } = setup({ format: 'json' });
    logger.log(entry({ path: '/mock/"quoted"\\\n\u2028é', note: 'a "note"' }));
    await turn();
    expect(stream.lines).toHaveLength(1);
    const line = stream.lines[0]!;
    expect(Object.keys(JSON.parse(line))).toEqual(['time', 'method', 'path', 'status', 'ms', 'note']);
    expect(JSON.parse(line).path).toBe('/mock/"quoted"\\\n\u2028é');
  });

  it('renders milliseconds of the time with three digits as the clock moves', async () => {
    const { stream, logger, advance } = setup({ format: 'json' });
    logger.log(entry());
    advance(-120); // .003
    logger.log(entry());
    advance(1_000); // next second, .003
    logger.log(entry());
    advance(47); // .050
    logger.log(entry());
    await turn();
    expect(stream.lines.map((line) => JSON.parse(line).time)).toEqual([
      '2023-11-14T22:13:20.123Z',
      '2023-11-14T22:13:20.003Z',
      '2023-11-14T22:13:21.003Z',
      '2023-11-14T22:13:21.050Z',
    ]);
    for (const line of stream.lines) expect(JSON.parse(line).time).toBe(new Date(JSON.parse(line).time).toISOString());
  });
});

describe('what never appears in a log', () => {
  it.each(['pretty', 'json'] as const)('%s: the query string (a key may be in it) is cut off', async (format) => {
    const { stream, logger } = setup({ format });
    logger.log(entry({ path: '/mock/users/42?api_key=mk_secret&x=1' }));
    await turn();
    expect(stream.text).toContain('/mock/users/42');
    expect(stream.text).not.toContain('mk_secret');
    expect(stream.text).not.toContain('?');
  });

  it.each(['pretty', 'json'] as const)(
    '%s: a key in the path or the note, plain or percent-encoded, is scrubbed',
    async (format) => {
      const key = 'mk_logKey000000000000000000000001';
      const { stream, logger } = setup({ format, redactor: () => createRedactor([key]) });
      logger.log(entry({ path: `/mock/items/${key}`, status: 404 }));
      logger.log(
        entry({
          path: `/mock/items/${key.replace('_', '%5F')}`,
          note: `served under /mock: did you mean /mock/x/${key}?`,
        }),
      );
      await turn();
      expect(stream.text).toContain('/mock/items/<redacted>');
      expect(stream.text).toContain('did you mean /mock/x/<redacted>?');
      expect(stream.text).not.toMatch(/logKey/);
    },
  );
});

describe('off', () => {
  it('writes nothing and attaches nothing to the stream', async () => {
    const { stream, logger } = setup({ format: 'off' });
    logger.log(entry());
    logger.flush();
    await turn();
    await logger.close();
    expect(stream.writes).toEqual([]);
    expect(stream.listenerCount('error')).toBe(0);
  });
});

describe('batching', () => {
  it('writes all lines of one event-loop turn in a single write, after the turn', async () => {
    const { stream, logger } = setup();
    for (let i = 0; i < 1000; i++) logger.log(entry());
    expect(stream.writes).toHaveLength(0);
    await turn();
    expect(stream.writes).toHaveLength(1);
    expect(stream.lines).toHaveLength(1000);
  });

  it('writes early once 64 KiB are queued', () => {
    const { stream, logger } = setup();
    const line = '22:13:20 GET /mock/users/42 200 3ms\n';
    const needed = Math.ceil((64 * 1024) / line.length);
    for (let i = 0; i < needed - 1; i++) logger.log(entry());
    expect(stream.writes).toHaveLength(0);
    logger.log(entry());
    expect(stream.writes).toHaveLength(1);
    expect(stream.writes[0]!.length).toBeGreaterThanOrEqual(64 * 1024);
  });

  it('keeps order across turns and writes', async () => {
    const { stream, logger } = setup({ format: 'json', flushThreshold: 500 });
    for (let i = 0; i < 100; i++) {
      logger.log(entry({ status: 200 + i }));
      if (i % 30 === 0) await turn();
    }
    await turn();
    expect(stream.lines.map((line) => JSON.parse(line).status)).toEqual(Array.from({ length: 100 }, (_, i) => 200 + i));
    expect(stream.writes.length).toBeLessThan(40);
  });

  it('flush() writes queued lines at once', () => {
    const { stream, logger } = setup();
    logger.log(entry());
    logger.log(entry());
    logger.flush();
    expect(stream.writes).toHaveLength(1);
    expect(stream.lines).toHaveLength(2);
  });
});

describe('backpressure', () => {
  it('queues while the stream is full and writes again on drain', async () => {
    const { stream, logger } = setup();
    stream.accepting = false;
    logger.log(entry({ status: 201 }));
    await turn();
    expect(stream.writes).toHaveLength(1);
    for (let i = 0; i < 10; i++) logger.log(entry({ status: 202 }));
    await turn();
    expect(stream.writes).toHaveLength(1); // waiting for 'drain'
    stream.accepting = true;
    stream.emit('drain');
    expect(stream.writes).toHaveLength(2);
    expect(stream.lines).toHaveLength(11);
  });

  it('drops lines beyond the buffer limit, counts them and says so after drain', async () => {
    const line = '22:13:20 GET /mock/users/42 200 3ms\n';
    const { stream, logger } = setup({ bufferLimit: line.length * 100 });
    stream.accepting = false;
    logger.log(entry());
    await turn(); // first write answers false
    for (let i = 0; i < 1000; i++) logger.log(entry());
    await turn();
    expect(stream.writes).toHaveLength(1);
    stream.accepting = true;
    stream.emit('drain');
    expect(stream.lines).toHaveLength(1 + 100 + 1);
    expect(stream.lines.at(-1)).toBe('22:13:20 900 log lines dropped (output too slow)');
    // Normal logging resumes, with no repeated notice.
    logger.log(entry());
    await turn();
    expect(stream.lines).toHaveLength(103);
    expect(stream.text.match(/dropped/g)).toHaveLength(1);
  });

  it('bounds memory at the default 8 MiB limit', async () => {
    const { stream, logger } = setup({ format: 'json' });
    stream.accepting = false;
    logger.log(entry());
    await turn();
    const big = entry({ path: `/mock/${'x'.repeat(1000)}` });
    for (let i = 0; i < 10_000; i++) logger.log(big); // ~10 MB of lines
    stream.accepting = true;
    stream.emit('drain');
    const lines = stream.lines;
    const notice = JSON.parse(lines.at(-1)!);
    expect(notice.dropped).toBeGreaterThan(1000);
    expect(notice.message).toBe(`${notice.dropped} log lines dropped (output too slow)`);
    expect(lines.length - 2 + notice.dropped).toBe(10_000);
    expect(stream.writes[1]!.length).toBeLessThanOrEqual(8 * 1024 * 1024 + 200);
  });

  it('close() waits for drain', async () => {
    const { stream, logger } = setup();
    stream.accepting = false;
    logger.log(entry());
    let closed = false;
    const closing = logger.close().then(() => (closed = true));
    expect(stream.writes).toHaveLength(1); // flushed at once
    await turn();
    expect(closed).toBe(false);
    stream.emit('drain');
    await closing;
    expect(closed).toBe(true);
    expect(stream.listenerCount('drain')).toBe(0);
    expect(stream.listenerCount('error')).toBe(0);
  });

  it('close() gives up waiting after its timeout', async () => {
    const { stream, logger } = setup({ closeTimeoutMs: 20 });
    stream.accepting = false;
    logger.log(entry());
    await logger.close();
    expect(stream.writes).toHaveLength(1);
  });
});

describe('lifecycle and errors', () => {
  it('ignores lines after close()', async () => {
    const { stream, logger } = setup();
    logger.log(entry());
    await logger.close();
    logger.log(entry());
    await turn();
    expect(stream.lines).toHaveLength(1);
    await logger.close(); // twice is fine
  });

  it('goes quiet instead of crashing when the stream errors (EPIPE)', async () => {
    const { stream, logger } = setup();
    logger.log(entry());
    expect(() => stream.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))).not.toThrow();
    logger.log(entry());
    await turn();
    expect(stream.writes).toHaveLength(0);
    await logger.close();
  });

  it('goes quiet when write() throws', async () => {
    const { stream, logger } = setup();
    stream.write = () => {
      throw new Error('write after end');
    };
    logger.log(entry());
    await turn();
    logger.log(entry());
    expect(() => logger.flush()).not.toThrow();
    await logger.close();
  });

  it('works with a real Writable (smoke)', async () => {
    const { Writable } = await import('node:stream');
    const chunks: string[] = [];
    const writable = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        chunks.push(chunk.toString());
        callback();
      },
    });
    const logger = createRequestLogger({ format: 'json', stream: writable, clock: () => NOW });
    logger.log(entry());
    await logger.close();
    expect(JSON.parse(chunks.join(''))).toMatchObject({ method: 'GET', status: 200 });
  });
});

describe('oversized lines', () => {
  it('drops a single line larger than the buffer limit and reports it', async () => {
    const { stream, logger } = setup({ bufferLimit: 1000 });
    logger.log(entry({ path: `/mock/${'x'.repeat(5000)}` }));
    await turn();
    expect(stream.lines).toEqual(['22:13:20 1 log line dropped (output too slow)']);
  });
});
