// Issue 6, HTTP side: no input crashes `mockapi serve`. Black-box against the built CLI on port 0:
// a battery of malformed and hostile requests over raw sockets, each with its exact answer and
// followed by a normal request, then body limits, pipelining, vanishing and idle clients, and the
// node:http timeouts at their real defaults.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { request, Agent } from 'undici';
import { cp, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { join, resolve } from 'node:path';
import { removeDir, startServe, stopAll, tempDir, type ServeProcess } from '../helpers/cli.js';
import {
  openRaw,
  parseResponses,
  sendRaw,
  type RawConnection,
  type RawResult,
} from '../fixtures/hardening/raw-http.js';

const FIXTURE = resolve(import.meta.dirname, '..', 'fixtures', 'hardening', 'http');
const KEY = 'mk_hardeningKey0123456789abcdefghij';
const PUBLIC = 'public file\n';
const SECRET = 'TOP-SECRET';
const JSON_TYPE = 'application/json; charset=utf-8';

const json = (value: unknown) => JSON.stringify(value);
const MALFORMED = json({ error: 'bad_request', message: 'Malformed HTTP request' });
const CONNECT_REFUSED = json({ error: 'bad_request', message: 'CONNECT is not supported: mockapi is not a proxy' });
const BAD_ENCODING = json({ error: 'bad_request', message: 'Malformed percent-encoding in request path' });
const NUL_IN_PATH = json({ error: 'bad_request', message: 'Request path contains a NUL byte' });
const NO_HOST = json({ error: 'bad_request', message: 'HTTP/1.1 request without a Host header' });
const HEADERS_TOO_LARGE = json({ error: 'request_header_fields_too_large', message: 'Request headers exceed 16 KiB' });
const TIMED_OUT = json({ error: 'request_timeout', message: 'The request was not received in time' });
const TOO_LARGE = json({ error: 'payload_too_large', message: 'Request body exceeds the limit of 1048576 bytes' });
const NO_KEY = json({ error: 'Unauthorized', message: 'No API key provided' });
const INVALID_KEY = json({ error: 'Unauthorized', message: 'Invalid API key' });
const notFound = (method: string, path: string) =>
  json({ error: 'not_found', message: `No endpoint configured for ${method} ${path}` });

/** Headers of an ordinary authenticated request that closes its connection. */
const H = `Host: x\r\nx-api-key: ${KEY}\r\nConnection: close\r\n`;
const get = (target: string, headers = H) => `GET ${target} HTTP/1.1\r\n${headers}\r\n`;
const post = (target: string, framing: string, body = '') => `POST ${target} HTTP/1.1\r\n${H}${framing}\r\n${body}`;
const basic = (text: string) => Buffer.from(text).toString('base64');

let dir: string;
let server: ServeProcess;
let port: number;

/** Long-running probes of the default timeouts; started first, checked at the end. */
let probes: Promise<{ slowloris: RawConnection; idleKeepAlive: RawConnection; silent: RawConnection; lines: number }>;

beforeAll(async () => {
  dir = await tempDir('mockapi-hardening-');
  await cp(FIXTURE, dir, { recursive: true });
  server = await startServe(['-c', join(dir, 'mockapi.yaml'), '--no-state', '--no-watch', '--log', 'json']);
  port = Number(new URL(server.url).port);
  probes = startTimeoutProbes();
});

afterAll(async () => {
  await stopAll();
  await removeDir(dir);
});

/** A normal request on a fresh connection still gets its 200. */
async function expectStillServing(): Promise<void> {
  const res = await request(`${server.mock}/users/1`, { headers: { 'x-api-key': KEY }, reset: true });
  expect(res.statusCode).toBe(200);
  expect(await res.body.text()).toBe('{"id":42}');
}

type Expected = { status: number; body: string } | 'closed without an answer';

interface Case {
  name: string;
  send: string | string[];
  expect: Expected;
}

const BATTERY: Case[] = [
  // request line
  { name: 'a request line that is not HTTP', send: 'GARBAGE\r\n\r\n', expect: { status: 400, body: MALFORMED } },
  {
    name: 'a TLS ClientHello sent to the plain-HTTP port',
    send: '\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\x00\x01\x02\x03',
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'an unknown method',
    send: get('/mock/users/1').replace('GET', 'FOO'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'a lower-case method',
    send: get('/mock/users/1').replace('GET', 'get'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'HTTP/1.2',
    send: get('/mock/users/1').replace('HTTP/1.1', 'HTTP/1.2'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'HTTP/9.9',
    send: get('/mock/users/1').replace('HTTP/1.1', 'HTTP/9.9'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'an extra token after the version',
    send: get('/mock/users/1').replace('HTTP/1.1', 'HTTP/1.1 extra'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'an HTTP/0.9 request (no version, no headers)',
    send: 'GET /mock/users/1\r\n\r\n',
    expect: { status: 401, body: NO_KEY },
  },
  { name: 'a raw NUL byte in the target', send: get('/mock/users/a\0b'), expect: { status: 400, body: MALFORMED } },
  {
    name: 'a raw escape character in the target',
    send: get('/mock/\x1b[31mred'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'a raw non-ASCII byte in the target',
    send: get('/mock/users/\xe9'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'an absolute-form target',
    send: get('http://elsewhere.example/mock/users/1'),
    expect: { status: 200, body: '{"id":42}' },
  },
  {
    name: 'OPTIONS *',
    send: get('*').replace('GET', 'OPTIONS'),
    expect: { status: 404, body: notFound('OPTIONS', '*') },
  },
  {
    name: 'CONNECT',
    send: `CONNECT 127.0.0.1:22 HTTP/1.1\r\n${H}\r\n`,
    expect: { status: 400, body: CONNECT_REFUSED },
  },
  {
    name: 'empty lines before the request line',
    send: '\r\n\r\n' + get('/mock/users/1'),
    expect: { status: 200, body: '{"id":42}' },
  },

  // percent-encoding and dot segments (SPEC §3: 400 bad_request; matching on the decoded path)
  { name: '%zz', send: get('/mock/users/%zz'), expect: { status: 400, body: BAD_ENCODING } },
  { name: 'a % at the end', send: get('/mock/users/%'), expect: { status: 400, body: BAD_ENCODING } },
  { name: 'overlong UTF-8 %C0%AF', send: get('/mock/users/%C0%AF'), expect: { status: 400, body: BAD_ENCODING } },
  {
    name: 'an encoded UTF-16 surrogate %ED%A0%80',
    send: get('/mock/users/%ED%A0%80'),
    expect: { status: 400, body: BAD_ENCODING },
  },
  {
    name: 'a truncated sequence %E0%A4%A',
    send: get('/mock/users/%E0%A4%A'),
    expect: { status: 400, body: BAD_ENCODING },
  },
  { name: 'a lone %FF', send: get('/mock/users/%FF'), expect: { status: 400, body: BAD_ENCODING } },
  { name: 'an encoded NUL %00', send: get('/mock/users/%00'), expect: { status: 400, body: NUL_IN_PATH } },
  { name: 'valid escapes are decoded before matching', send: get('/mock/a/%62'), expect: { status: 200, body: 'ab' } },
  {
    name: 'valid UTF-8 in a parameter',
    send: get('/mock/users/%F0%9F%98%80'),
    expect: { status: 200, body: '{"id":42}' },
  },
  { name: 'a .. segment is resolved', send: get('/mock/x/../a/b'), expect: { status: 200, body: 'ab' } },
  {
    name: 'an encoded %2e%2E segment is resolved',
    send: get('/mock/x/%2e%2E/a/b'),
    expect: { status: 200, body: 'ab' },
  },
  {
    name: '.. cannot climb above the root',
    send: get('/mock/../../../etc/passwd'),
    expect: { status: 404, body: notFound('GET', '/etc/passwd') },
  },
  {
    name: '.. out of a wildcard endpoint',
    send: get('/mock/files/../secret.txt'),
    expect: { status: 404, body: notFound('GET', '/secret.txt') },
  },
  {
    name: 'an encoded slash stays inside the wildcard and serves the configured file',
    send: get('/mock/files/..%2fsecret.txt'),
    expect: { status: 200, body: PUBLIC },
  },
  {
    name: 'an encoded backslash serves the configured file',
    send: get('/mock/files/..%5c..%5csecret.txt'),
    expect: { status: 200, body: PUBLIC },
  },
  {
    name: 'a doubled slash matches nothing',
    send: get('/mock//a/b'),
    expect: { status: 404, body: notFound('GET', '//a/b') },
  },
  {
    name: 'a raw backslash matches nothing',
    send: get('/mock/a\\b'),
    expect: { status: 404, body: notFound('GET', '/a\\b') },
  },
  {
    name: 'an encoded slash is not a separator',
    send: get('/mock/a%2Fb'),
    expect: { status: 404, body: notFound('GET', '/a%2Fb') },
  },
  {
    name: 'a malformed query string is ignored',
    send: get('/mock/users/1?a=%zz&b=%'),
    expect: { status: 200, body: '{"id":42}' },
  },
  { name: 'a fragment is ignored', send: get('/mock/users/1#frag'), expect: { status: 200, body: '{"id":42}' } },
  {
    name: 'a 100 KB query string',
    send: get(`/mock/users/1?q=${'x'.repeat(100_000)}`),
    expect: { status: 431, body: HEADERS_TOO_LARGE },
  },
  {
    name: 'a 10,000-segment path over 16 KiB',
    send: get(`/mock${'/x'.repeat(10_000)}`),
    expect: { status: 431, body: HEADERS_TOO_LARGE },
  },
  {
    name: 'a 10,000-segment path under 16 KiB',
    send: get(`/mock${'/'.repeat(10_000)}`),
    expect: { status: 404, body: notFound('GET', '/'.repeat(10_000)) },
  },
  {
    name: '2,000 encoded .. segments',
    send: get(`/mock/${'%2e%2e/'.repeat(2000)}users/1`),
    expect: { status: 404, body: notFound('GET', '/users/1') },
  },

  // header syntax and size
  {
    name: 'a space in a header name',
    send: get('/mock/users/1', `${H}Bad Header: v\r\n`),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'a control character in a header value',
    send: get('/mock/users/1', `${H}x-note: a\x01b\r\n`),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'DEL in a header value',
    send: get('/mock/users/1', `${H}x-note: \x7f\r\n`),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'an obs-fold continuation line',
    send: get('/mock/users/1', `${H}x-note: a\r\n folded\r\n`),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'bare LF line endings',
    send: get('/mock/users/1').replaceAll('\r\n', '\n'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'a header block over 16 KiB',
    send: get('/mock/users/1', `${H}x-big: ${'v'.repeat(17 * 1024)}\r\n`),
    expect: { status: 431, body: HEADERS_TOO_LARGE },
  },
  {
    name: 'a header block just under 16 KiB',
    send: get('/mock/users/1', `${H}x-big: ${'v'.repeat(15 * 1024)}\r\n`),
    expect: { status: 200, body: '{"id":42}' },
  },
  {
    name: '3,000 small headers (over 16 KiB)',
    send: get('/mock/users/1', H + Array.from({ length: 3000 }, (_, i) => `h${i}: v\r\n`).join('')),
    expect: { status: 431, body: HEADERS_TOO_LARGE },
  },
  {
    name: 'HTTP/1.1 without Host',
    send: `GET /mock/users/1 HTTP/1.1\r\nx-api-key: ${KEY}\r\nConnection: close\r\n\r\n`,
    expect: { status: 400, body: NO_HOST },
  },
  {
    name: 'HTTP/1.0 without Host',
    send: `GET /mock/users/1 HTTP/1.0\r\nx-api-key: ${KEY}\r\n\r\n`,
    expect: { status: 200, body: '{"id":42}' },
  },
  {
    name: 'an Expect other than 100-continue',
    send: get('/mock/users/1', `${H}Expect: teapot\r\n`),
    expect: { status: 200, body: '{"id":42}' },
  },

  // body framing (request smuggling and absurd lengths)
  {
    name: 'two different Content-Length headers',
    send: post('/mock/orders', 'Content-Length: 1\r\nContent-Length: 2\r\n', 'ab'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'two equal Content-Length headers',
    send: post('/mock/orders', 'Content-Length: 2\r\nContent-Length: 2\r\n', 'ab'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'a Content-Length list',
    send: post('/mock/orders', 'Content-Length: 2, 2\r\n', 'ab'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'Content-Length with Transfer-Encoding (CL.TE smuggling)',
    send: post(
      '/mock/orders',
      'Content-Length: 4\r\nTransfer-Encoding: chunked\r\n',
      '0\r\n\r\nGET /mock/users/2 HTTP/1.1\r\n\r\n',
    ),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'Transfer-Encoding gzip without chunked',
    send: post('/mock/orders', 'Transfer-Encoding: gzip\r\n', 'abc'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'Transfer-Encoding chunked, identity',
    send: post('/mock/orders', 'Transfer-Encoding: chunked, identity\r\n', '0\r\n\r\n'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'Transfer-Encoding chunked twice',
    send: post('/mock/orders', 'Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n', '0\r\n\r\n'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'a chunk size that is not hex',
    send: post('/mock/orders', 'Transfer-Encoding: chunked\r\n', 'zz\r\nab\r\n0\r\n\r\n'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'a chunk size overflowing 64 bits',
    send: post('/mock/orders', 'Transfer-Encoding: chunked\r\n', 'FFFFFFFFFFFFFFFFFF\r\n'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'a chunked body cut short',
    send: post('/mock/orders', 'Transfer-Encoding: chunked\r\n', '200000\r\nabc'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'chunk extensions and trailers',
    send: post('/mock/orders', 'Transfer-Encoding: chunked\r\n', '5;ext=1\r\nhello\r\n0\r\nx-trailer: t\r\n\r\n'),
    expect: { status: 201, body: 'created' },
  },
  {
    name: 'a 20-digit Content-Length',
    send: post('/mock/orders', 'Content-Length: 99999999999999999999\r\n'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'a negative Content-Length',
    send: post('/mock/orders', 'Content-Length: -1\r\n'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'a Content-Length with a plus sign',
    send: post('/mock/orders', 'Content-Length: +3\r\n', 'abc'),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'a Content-Length over the limit, no body sent',
    send: post('/mock/orders', 'Content-Length: 2000000\r\n'),
    expect: { status: 413, body: TOO_LARGE },
  },
  {
    name: 'a body shorter than its Content-Length, then end of stream',
    send: post('/mock/orders', 'Content-Length: 10\r\n', 'abc'),
    expect: { status: 400, body: MALFORMED },
  },

  // credentials (SPEC §4)
  {
    name: 'X-API-Key sent twice with the right key',
    send: get('/mock/users/1', `${H}x-api-key: ${KEY}\r\n`),
    expect: { status: 401, body: INVALID_KEY },
  },
  {
    name: 'X-API-Key with the right key and an empty repeat',
    send: get('/mock/users/1', `${H}x-api-key: \r\n`),
    expect: { status: 401, body: INVALID_KEY },
  },
  {
    name: 'X-API-Key with a tab and more after the key',
    send: get('/mock/users/1', `Host: x\r\nx-api-key: ${KEY}\tjunk\r\n`),
    expect: { status: 401, body: INVALID_KEY },
  },
  {
    name: 'X-API-Key with Latin-1 bytes',
    send: get('/mock/users/1', 'Host: x\r\nx-api-key: \xff\xfe\r\n'),
    expect: { status: 401, body: INVALID_KEY },
  },
  {
    name: 'X-API-Key of 15 KiB',
    send: get('/mock/users/1', `Host: x\r\nx-api-key: ${'k'.repeat(15 * 1024)}\r\n`),
    expect: { status: 401, body: INVALID_KEY },
  },
  {
    name: 'X-API-Key with a NUL after the key',
    send: get('/mock/users/1', `Host: x\r\nx-api-key: ${KEY}\0\r\n`),
    expect: { status: 400, body: MALFORMED },
  },
  {
    name: 'the key in another case',
    send: get('/mock/users/1', `Host: x\r\nx-api-key: ${KEY.toUpperCase()}\r\n`),
    expect: { status: 401, body: INVALID_KEY },
  },
  {
    name: 'Basic with unpadded base64url',
    send: get('/mock/users/1', `Host: x\r\nAuthorization: Basic ${Buffer.from(`${KEY}:x`).toString('base64url')}\r\n`),
    expect: { status: 401, body: INVALID_KEY },
  },
  {
    name: 'Basic with a space inside the token',
    send: get(
      '/mock/users/1',
      `Host: x\r\nAuthorization: Basic ${basic(`${KEY}:`).slice(0, 8)} ${basic(`${KEY}:`).slice(8)}\r\n`,
    ),
    expect: { status: 401, body: INVALID_KEY },
  },
  {
    name: 'Basic with characters outside base64',
    send: get('/mock/users/1', 'Host: x\r\nAuthorization: Basic !!!!\r\n'),
    expect: { status: 401, body: INVALID_KEY },
  },
  {
    name: 'Basic of bytes that are not UTF-8',
    send: get(
      '/mock/users/1',
      `Host: x\r\nAuthorization: Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0x41]).toString('base64')}\r\n`,
    ),
    expect: { status: 401, body: INVALID_KEY },
  },
  {
    name: 'Bearer with the key and a suffix',
    send: get('/mock/users/1', `Host: x\r\nAuthorization: Bearer ${KEY}x\r\n`),
    expect: { status: 401, body: INVALID_KEY },
  },
  {
    name: 'an unknown Authorization scheme',
    send: get('/mock/users/1', `Host: x\r\nAuthorization: Token ${KEY}\r\n`),
    expect: { status: 401, body: NO_KEY },
  },
  {
    name: 'Authorization with a wrong key first and the right one second',
    send: get('/mock/users/1', `Host: x\r\nAuthorization: Bearer wrong\r\nAuthorization: Bearer ${KEY}\r\n`),
    expect: { status: 401, body: INVALID_KEY },
  },
  {
    name: 'Authorization with the right key first and a wrong one second',
    send: get('/mock/users/1', `Host: x\r\nAuthorization: Bearer ${KEY}\r\nAuthorization: Bearer wrong\r\n`),
    expect: { status: 401, body: INVALID_KEY },
  },
  {
    name: 'two Authorization headers with the right key',
    send: get('/mock/users/1', `Host: x\r\nAuthorization: Bearer ${KEY}\r\nauthorization: Bearer ${KEY}\r\n`),
    expect: { status: 401, body: INVALID_KEY },
  },
];

function firstAnswer(result: RawResult): Expected {
  const first = result.responses[0];
  if (first === undefined) return 'closed without an answer';
  return { status: first.status, body: first.body };
}

describe('bad-input battery: exact answers, and the server answers the next request', () => {
  test('has at least 30 cases', () => {
    expect(BATTERY.length).toBeGreaterThanOrEqual(30);
  });

  test.each(BATTERY)('$name', async ({ send, expect: expected }) => {
    const result = await sendRaw(port, send);
    expect(result.ended).not.toBe('timeout');
    expect(firstAnswer(result)).toEqual(expected);
    const first = result.responses[0];
    if (first !== undefined && first.status >= 400) expect(first.headers['content-type']).toBe(JSON_TYPE);
    expect(result.raw).not.toContain(SECRET);
    await expectStillServing();
  });
});

describe('CONNECT (node:http hands it over as a bare socket)', () => {
  const CONNECT = `CONNECT 127.0.0.1:22 HTTP/1.1\r\n${H}\r\n`;

  test('the server answers and closes the connection itself, with tunnel bytes already sent', async () => {
    const c = await openRaw(port);
    c.socket.write(Buffer.from(`${CONNECT}SSH-2.0-OpenSSH_9.6\r\n`, 'latin1'));
    await c.closed;
    expect(parseResponses(c.received()).map((r) => [r.status, r.body])).toEqual([[400, CONNECT_REFUSED]]);
    await expectStillServing();
  });

  test('clients that reset right after sending it do not hurt the server', async () => {
    for (let i = 0; i < 20; i++) {
      const c = await openRaw(port);
      c.socket.write(CONNECT);
      c.socket.resetAndDestroy();
      await c.closed;
    }
    await expectStillServing();
  });
});

describe('bodies over server.maxBodySize (1 MiB by default) get the 413 JSON', () => {
  function* chunks(count: number, size: number) {
    for (let i = 0; i < count; i++) yield Buffer.alloc(size, 0x61);
  }

  test.each([
    ['Content-Length, 3 MiB', () => Buffer.alloc(3 * 1024 * 1024, 0x61)],
    ['chunked, 40 × 64 KiB', () => Readable.from(chunks(40, 64 * 1024))],
    ['chunked, 200 × 64 KiB', () => Readable.from(chunks(200, 64 * 1024))],
  ])('%s: the client reads the 413 while still sending, and the connection stays usable', async (_name, body) => {
    const agent = new Agent({ connections: 1 });
    try {
      const res = await request(`${server.mock}/orders`, {
        method: 'POST',
        headers: { 'x-api-key': KEY },
        body: body(),
        dispatcher: agent,
      });
      expect(res.statusCode).toBe(413);
      expect(res.headers['content-type']).toBe(JSON_TYPE);
      expect(await res.body.text()).toBe(TOO_LARGE);
      const next = await request(`${server.mock}/orders`, {
        method: 'POST',
        headers: { 'x-api-key': KEY },
        body: '{"a":1}',
        dispatcher: agent,
      });
      expect(next.statusCode).toBe(201);
      expect(await next.body.text()).toBe('created');
    } finally {
      await agent.close();
    }
  });

  test('exactly the limit is accepted, one byte more is not', async () => {
    const at = await request(`${server.mock}/orders`, {
      method: 'POST',
      headers: { 'x-api-key': KEY },
      body: Buffer.alloc(1024 * 1024),
    });
    expect(at.statusCode).toBe(201);
    await at.body.dump();
    const over = await sendRaw(port, [
      post('/mock/orders', 'Transfer-Encoding: chunked\r\n'),
      `100001\r\n${'a'.repeat(1024 * 1024 + 1)}\r\n0\r\n\r\n`,
    ]);
    expect(firstAnswer(over)).toEqual({ status: 413, body: TOO_LARGE });
  });
});

describe('a 413 reaches the client however the connection ends (Connection: close or keep-alive, Content-Length or chunked)', () => {
  const SIZE = 4 * 1024 * 1024; // past the socket buffers: the client is still sending when the 413 is written
  const ROUNDS = 50;
  const SMALL_TOO_LARGE = json({ error: 'payload_too_large', message: 'Request body exceeds the limit of 1024 bytes' });
  let small: ServeProcess;
  let smallPort: number;
  beforeAll(async () => {
    const config = join(dir, 'small-body.yaml');
    await writeFile(
      config,
      `apiKey: ${KEY}\nserver:\n  maxBodySize: 1kb\nendpoints:\n  - method: POST\n    path: /orders\n    response: { status: 201, body: created }\n`,
    );
    small = await startServe(['-c', config, '--no-state', '--no-watch', '--log', 'off']);
    smallPort = Number(new URL(small.url).port);
  });
  afterAll(() => small.stop());

  /**
   * Writes a request with a body of SIZE bytes as fast as the socket takes it (keep-alive: then a
   * small request on the same connection), never half-closing; collects everything until the
   * server closes the connection, and how it ended.
   */
  function oversized(
    path: string,
    connection: 'close' | 'keep-alive',
    framing: 'content-length' | 'chunked',
  ): Promise<{ responses: [number, string][]; error?: string }> {
    return new Promise((done) => {
      const socket = connect(smallPort, '127.0.0.1');
      let received = Buffer.alloc(0);
      let error: string | undefined;
      socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
      socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code));
      socket.on('close', () =>
        done({
          responses: parseResponses(received).map((r) => [r.status, r.body]),
          ...(error === undefined ? {} : { error }),
        }),
      );
      const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${KEY}\r\ncontent-type: application/json\r\nConnection: ${connection}\r\n`;
      if (framing === 'content-length') {
        socket.write(`${head}Content-Length: ${SIZE}\r\n\r\n`);
        socket.write(Buffer.alloc(SIZE, 0x61));
      } else {
        socket.write(`${head}Transfer-Encoding: chunked\r\n\r\n`);
        const chunk = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 0x61), Buffer.from('\r\n')]);
        for (let sent = 0; sent < SIZE; sent += 0x10000) socket.write(chunk);
        socket.write('0\r\n\r\n');
      }
      if (connection === 'keep-alive')
        socket.write(
          `POST /mock/orders HTTP/1.1\r\nHost: x\r\nx-api-key: ${KEY}\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}`,
        );
    });
  }

  const ADMIN_TOO_LARGE = json({ error: 'payload_too_large', message: 'admin calls take bodies up to 65536 bytes' });
  test.each([
    ['/mock/orders', 'close', 'content-length'],
    ['/mock/orders', 'close', 'chunked'],
    ['/mock/orders', 'keep-alive', 'content-length'],
    ['/mock/orders', 'keep-alive', 'chunked'],
    ['/__mockapi/reset', 'close', 'content-length'],
    ['/__mockapi/reset', 'close', 'chunked'],
    ['/__mockapi/reset', 'keep-alive', 'content-length'],
    ['/__mockapi/reset', 'keep-alive', 'chunked'],
    // Answered without reading the body at all: the same holds.
    ['/elsewhere', 'close', 'content-length'],
    ['/elsewhere', 'close', 'chunked'],
    ['/__mockapi/nope', 'close', 'content-length'],
  ] as const)(
    `POST %s, Connection: %s, %s body of 4 MiB: the answer arrives in each of ${ROUNDS} rounds, never EPIPE or a reset`,
    async (path, connection, framing) => {
      const answers: Record<string, [number, string]> = {
        '/mock/orders': [413, SMALL_TOO_LARGE],
        '/__mockapi/reset': [413, ADMIN_TOO_LARGE],
        '/elsewhere': [404, notFound('POST', '/elsewhere')],
        '/__mockapi/nope': [404, json({ error: 'not_found', message: 'No admin call POST /__mockapi/nope' })],
      };
      const expected: [number, string][] =
        connection === 'close' ? [answers[path]!] : [answers[path]!, [201, 'created']];
      const failures: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const result = await oversized(path, connection, framing);
        if (result.error !== undefined || JSON.stringify(result.responses) !== JSON.stringify(expected))
          failures.push(`round ${round}: ${JSON.stringify(result)}`);
      }
      expect(failures).toEqual([]);
    },
  );
});

describe('connections that misbehave do not hold up others', () => {
  test('pipelined requests are answered in order on one connection', async () => {
    const keepAlive = `Host: x\r\nx-api-key: ${KEY}\r\n`;
    const result = await sendRaw(
      port,
      [
        get('/mock/slow', keepAlive),
        get('/mock/users/1', keepAlive),
        post('/mock/orders', 'Content-Length: 3\r\n', 'abc').replace('Connection: close\r\n', ''),
        get('/mock/nope'),
      ],
      { end: false, responses: 4 },
    );
    expect(result.responses.map((r) => [r.status, r.body])).toEqual([
      [200, 'late'],
      [200, '{"id":42}'],
      [201, 'created'],
      [404, notFound('GET', '/nope')],
    ]);
  });

  test('a garbage request pipelined behind a good one gets a 400 and the connection closes', async () => {
    const result = await sendRaw(
      port,
      [get('/mock/users/1', `Host: x\r\nx-api-key: ${KEY}\r\n`), 'NOT HTTP AT ALL\r\n\r\n'],
      { end: false },
    );
    expect(result.ended).toBe('closed');
    expect(result.responses.map((r) => [r.status, r.body])).toEqual([
      [200, '{"id":42}'],
      [400, MALFORMED],
    ]);
    await expectStillServing();
  });

  test('clients that vanish mid-body or mid-delay', async () => {
    const vanishing = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const c = await openRaw(port);
        c.socket.write(i % 2 === 0 ? post('/mock/orders', 'Content-Length: 1000\r\n', 'abc') : get('/mock/slow'));
        return c;
      }),
    );
    await expectStillServing();
    for (const c of vanishing) c.socket.destroy();
    await Promise.all(vanishing.map((c) => c.closed));
    await expectStillServing();
    expect(server.child.exitCode).toBeNull();
  });

  test('300 idle, half-sent and half-open connections held open: a normal request still gets its 200', async () => {
    const held = await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        const c = await openRaw(port);
        if (i % 4 === 1) c.socket.write('GET /mock/users/1 HTTP/1.1\r\nHost: x\r\n'); // headers never finished
        if (i % 4 === 2) c.socket.write(post('/mock/orders', 'Content-Length: 100\r\n', 'abc')); // body never finished
        if (i % 4 === 3) c.socket.end(); // half-open: we stop writing but keep reading
        return c;
      }),
    );
    let open = 0;
    const stillOpen = held.map((c) => {
      let closed = false;
      void c.closed.then(() => (closed = true));
      return () => !closed;
    });
    try {
      for (let i = 0; i < 5; i++) await expectStillServing();
      const health = await request(`${server.url}/__mockapi/health`);
      expect(health.statusCode).toBe(200);
      await health.body.dump();
      open = stillOpen.filter((isOpen) => isOpen()).length;
    } finally {
      for (const c of held) c.socket.destroy();
    }
    // The idle, half-sent ones were really held while we asked (the half-open ones get closed).
    expect(open).toBeGreaterThanOrEqual(225);
  });
});

/**
 * Probes of the real defaults, started in beforeAll so their seconds overlap the battery:
 * - a slowloris that sends one more header line every 500 ms (so no idle timer applies)
 *   must be cut off by headersTimeout (10 s) with the 408 JSON;
 * - a connection that sends nothing is cut off the same way;
 * - an idle keep-alive connection after a complete exchange is closed (keepAliveTimeout, 5 s)
 *   without any further bytes.
 */
async function startTimeoutProbes() {
  const slowloris = await openRaw(port);
  slowloris.socket.write('GET /mock/users/1 HTTP/1.1\r\nHost: x\r\n');
  let lines = 0;
  const trickle = setInterval(() => {
    // bounded: 80 lines = 40 s, well past headersTimeout
    if (lines >= 80 || slowloris.socket.destroyed) return clearInterval(trickle);
    slowloris.socket.write(`x-slow-${lines++}: v\r\n`);
  }, 500);
  void slowloris.closed.then(() => clearInterval(trickle));

  const silent = await openRaw(port);

  const idleKeepAlive = await openRaw(port);
  idleKeepAlive.socket.write('GET /__mockapi/health HTTP/1.1\r\nHost: x\r\n\r\n');

  await Promise.all([slowloris.closed, silent.closed, idleKeepAlive.closed]);
  clearInterval(trickle);
  return { slowloris, silent, idleKeepAlive, lines };
}

describe('node:http limits at their defaults (SPEC §3: no input may crash the server)', () => {
  test('binds 127.0.0.1 when neither the config nor --host names a host', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  test('a slowloris trickling header lines is cut off with the 408 JSON; a silent connection too; an idle keep-alive is closed', async () => {
    const { slowloris, silent, idleKeepAlive, lines } = await probes;
    const cut = parseFirst(slowloris.received());
    expect(cut).toEqual({ status: 408, body: TIMED_OUT });
    expect(lines).toBeGreaterThan(4); // it really was trickling, not idle
    expect(lines).toBeLessThan(80); // and it was the server that ended it
    expect(parseFirst(silent.received())).toEqual({ status: 408, body: TIMED_OUT });
    const exchange = idleKeepAlive.received().toString('latin1');
    expect(exchange.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
    expect(exchange).toContain('Keep-Alive: timeout=5');
    expect(exchange.match(/HTTP\/1\.1 /g)).toHaveLength(1); // closed without a 408
  }, 30_000);

  test('API keys never appear in the logs, in any form', async () => {
    await request(`${server.mock}/users/1?apiKey=${KEY}`, {
      headers: { authorization: `Basic ${basic(`${KEY}:pw`)}` },
    }).then((r) => r.body.dump());
    await request(`${server.mock}/users/1?k=${KEY}`, { headers: { authorization: `Bearer ${KEY}` } }).then((r) =>
      r.body.dump(),
    );
    await server.waitForOutput(/"path":"\/mock\/users\/1".*\n.*"path":"\/mock\/users\/1"/s, 'stdout');
    const logs = server.stdout() + server.stderr();
    expect(logs.length).toBeGreaterThan(1000); // the battery above was logged
    for (const form of [
      KEY,
      KEY.slice(3),
      basic(`${KEY}:`).slice(0, 40),
      basic(`${KEY}:pw`).slice(0, 40),
      encodeURIComponent(KEY),
    ]) {
      expect(logs).not.toContain(form);
    }
  });

  test('nothing above crashed the server or reached its error path', () => {
    expect(server.child.exitCode).toBeNull();
    expect(server.stderr()).not.toMatch(/internal error|Error:|at .*\.js:\d+/);
  });
});

function parseFirst(raw: Buffer): Expected {
  return firstAnswer({ responses: parseResponses(raw), raw: raw.toString('latin1'), ended: 'closed' });
}
