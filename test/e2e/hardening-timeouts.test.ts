// Issue 6: the node:http limits of src/http-limits.ts do what their comments say. In-process with
// the timeouts shortened through startMockServer's internal `httpTimeouts`, so each takes a second
// or two; test/e2e/hardening-http.test.ts checks the real defaults against the built CLI.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { request } from 'undici';
import { HTTP_SERVER_OPTIONS } from '../../src/http/http-limits.js';
import { startMockServer, type MockServer } from '../../src/mock-server.js';
import { openRaw, parseResponses, sendRaw } from '../fixtures/hardening/raw-http.js';

const KEY = 'mk_timeoutsKey0123456789abcdefghijk';
const TIMED_OUT = '{"error":"request_timeout","message":"The request was not received in time"}';
const TOO_LARGE = '{"error":"payload_too_large","message":"Request body exceeds the limit of 1048576 bytes"}';
// Short, but not so short that a normal request's own headers can miss them: with a headersTimeout
// of 400 ms, a full run on two cores once gave the last normal request of "many slow clients" the 408
// meant for the slow ones. The server runs in this test's process, which a loaded machine can keep
// from the CPU for that long between accepting a connection and reading its headers.
const SHORT = { headersTimeout: 1000, requestTimeout: 2000, keepAliveTimeout: 300, connectionsCheckingInterval: 50 };

let server: MockServer;

beforeAll(async () => {
  server = await startMockServer({
    config: {
      apiKey: KEY,
      endpoints: [
        { method: 'GET', path: '/users/:id', response: { body: { id: 42 } } },
        { method: 'POST', path: '/orders', response: { status: 201, body: 'created' } },
        // longer than requestTimeout: configured delays are not cut short
        { method: 'GET', path: '/slow', delay: '2500ms', response: { body: 'late' } },
      ],
    },
    port: 0,
    httpTimeouts: SHORT,
  });
});

afterAll(async () => {
  await server.close();
});

async function normalRequest(): Promise<[number, string]> {
  const res = await request(`${server.url}/mock/users/1`, { headers: { 'x-api-key': KEY }, reset: true });
  return [res.statusCode, await res.body.text()];
}

/** Writes `line(i)` every `everyMs` until the server closes the connection (at most `max` times). */
function trickle(
  socket: import('node:net').Socket,
  everyMs: number,
  max: number,
  line: (i: number) => string,
): { count(): number } {
  let sent = 0;
  const timer = setInterval(() => {
    if (sent >= max || socket.destroyed) return clearInterval(timer);
    socket.write(line(sent++));
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
  return { count: () => sent };
}

describe('documented defaults', () => {
  test('headersTimeout 10 s, requestTimeout 30 s, keepAliveTimeout 5 s, checked every 1 s, headers up to 16 KiB', () => {
    expect(HTTP_SERVER_OPTIONS).toEqual({
      headersTimeout: 10_000,
      requestTimeout: 30_000,
      keepAliveTimeout: 5_000,
      connectionsCheckingInterval: 1_000,
      maxHeaderSize: 16 * 1024,
      requireHostHeader: false,
    });
  });
});

describe('slow clients are cut off, others are served meanwhile', () => {
  test('headersTimeout: header lines trickled forever get the 408 JSON and the connection is closed', async () => {
    const c = await openRaw(server.port);
    c.socket.write('GET /mock/users/1 HTTP/1.1\r\nHost: x\r\n');
    const lines = trickle(c.socket, 50, 200, (i) => `x-slow-${i}: v\r\n`);
    expect(await normalRequest()).toEqual([200, '{"id":42}']);
    await c.closed;
    expect(lines.count()).toBeGreaterThan(2);
    expect(lines.count()).toBeLessThan(200); // the server ended it, not the trickle running out
    const answers = parseResponses(c.received());
    expect(answers.map((r) => [r.status, r.body])).toEqual([[408, TIMED_OUT]]);
    expect(answers[0]!.headers.connection).toBe('close');
  });

  test('headersTimeout also closes a connection that never sends a byte', async () => {
    const c = await openRaw(server.port);
    expect(await normalRequest()).toEqual([200, '{"id":42}']);
    await c.closed;
    expect(parseResponses(c.received()).map((r) => [r.status, r.body])).toEqual([[408, TIMED_OUT]]);
  });

  test('requestTimeout: a body trickled forever gets the 408 JSON and the connection is closed', async () => {
    const c = await openRaw(server.port);
    c.socket.write(`POST /mock/orders HTTP/1.1\r\nHost: x\r\nx-api-key: ${KEY}\r\nContent-Length: 100000\r\n\r\n`);
    const bytes = trickle(c.socket, 50, 400, () => 'x');
    expect(await normalRequest()).toEqual([200, '{"id":42}']);
    await c.closed;
    expect(bytes.count()).toBeGreaterThan(SHORT.headersTimeout / 50); // the body outlived headersTimeout
    expect(bytes.count()).toBeLessThan(400);
    expect(parseResponses(c.received()).map((r) => [r.status, r.body])).toEqual([[408, TIMED_OUT]]);
  });

  test.each(['keep-alive', 'close'])(
    'a 413 answered while the body still trickles in (Connection: %s): closed at requestTimeout, with the 413 and no 408 after it',
    async (connection) => {
      const c = await openRaw(server.port);
      c.socket.write(
        `POST /mock/orders HTTP/1.1\r\nHost: x\r\nx-api-key: ${KEY}\r\nConnection: ${connection}\r\nContent-Length: 2000000\r\n\r\n`,
      );
      const bytes = trickle(c.socket, 50, 400, () => 'x');
      await c.closed;
      expect(bytes.count()).toBeLessThan(400);
      expect(parseResponses(c.received()).map((r) => [r.status, r.body])).toEqual([[413, TOO_LARGE]]);
      expect(await normalRequest()).toEqual([200, '{"id":42}']);
    },
  );

  test.each(['keep-alive', 'close'])(
    'a client that gives up half-way through a body over the limit (Connection: %s) gets the 413, then the connection is closed',
    async (connection) => {
      const result = await sendRaw(server.port, [
        `POST /mock/orders HTTP/1.1\r\nHost: x\r\nx-api-key: ${KEY}\r\nConnection: ${connection}\r\nContent-Length: 2000000\r\n\r\n`,
        'x'.repeat(100_000),
      ]);
      expect(result.ended).toBe('closed');
      expect(result.responses.map((r) => [r.status, r.body])).toEqual([[413, TOO_LARGE]]);
    },
  );

  test('keepAliveTimeout: an idle keep-alive connection is closed after its answer, without a 408', async () => {
    const c = await openRaw(server.port);
    c.socket.write(`GET /mock/users/1 HTTP/1.1\r\nHost: x\r\nx-api-key: ${KEY}\r\n\r\n`);
    await c.closed;
    expect(parseResponses(c.received()).map((r) => [r.status, r.body])).toEqual([[200, '{"id":42}']]);
  });

  test('an endpoint delay longer than requestTimeout is still answered', async () => {
    const result = await sendRaw(server.port, `GET /mock/slow HTTP/1.1\r\nHost: x\r\nx-api-key: ${KEY}\r\n\r\n`, {
      end: false,
      responses: 1,
    });
    expect(result.responses.map((r) => [r.status, r.body])).toEqual([[200, 'late']]);
  });

  test('many slow clients at once do not stop the server answering', async () => {
    const slow = await Promise.all(Array.from({ length: 50 }, () => openRaw(server.port)));
    slow.forEach((c, i) =>
      c.socket.write(
        i % 2 === 0
          ? 'GET /mock/users/1 HTTP/1.1\r\n'
          : `POST /mock/orders HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\n`,
      ),
    );
    for (let i = 0; i < 5; i++) expect(await normalRequest()).toEqual([200, '{"id":42}']);
    await Promise.all(slow.map((c) => c.closed));
    for (const c of slow) expect(parseResponses(c.received()).map((r) => r.status)).toEqual([408]);
    expect(await normalRequest()).toEqual([200, '{"id":42}']);
  });
});
