import {
  createServer,
  STATUS_CODES,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerOptions,
  type ServerResponse,
} from 'node:http';
import type { Duplex } from 'node:stream';
import type { AnswerBody } from '../answer/answer-body.js';
import { https } from '../lazy-builtins.js';
import { flushWrites } from './write-batch.js';

/**
 * node:http limits, set on purpose (Node's defaults suit a general server, not one a test suite
 * hammers on a laptop):
 * - headersTimeout 10 s: a client must send all its headers within 10 s (slowloris).
 * - requestTimeout 30 s: and its whole request within 30 s. Not 0: 0 would also turn off
 *   headersTimeout's enforcement and let slow clients hold connections for ever.
 * - keepAliveTimeout 5 s: an idle keep-alive connection is closed after 5 s.
 * - connectionsCheckingInterval 1 s: how often those timeouts are checked (Node's default is 30 s).
 * - maxHeaderSize 16 KiB: larger header blocks get 431.
 * - requireHostHeader off: the handler answers an HTTP/1.1 request without Host with a JSON 400
 *   itself (Node's own 400 has no body).
 * Response delays configured on endpoints are not limited by any of these.
 */
export const HTTP_SERVER_OPTIONS: ServerOptions = {
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  keepAliveTimeout: 5_000,
  connectionsCheckingInterval: 1_000,
  maxHeaderSize: 16 * 1024,
  requireHostHeader: false,
};

/** A TLS certificate (chain) and its private key, PEM: given, an HTTPS port is made instead of an HTTP one. */
export interface TlsCredentials {
  cert: string;
  key: string;
}

/** A TLS client must finish its handshake within 10 s, as it must send its headers (Node's default is 120 s). */
export const HANDSHAKE_TIMEOUT_MS = 10_000;

/** The timeouts of {@link HTTP_SERVER_OPTIONS}; tests may shorten them. */
export type HttpTimeouts = Partial<
  Pick<ServerOptions, 'headersTimeout' | 'requestTimeout' | 'keepAliveTimeout' | 'connectionsCheckingInterval'>
>;

/**
 * A node:http server as every port of mockapi needs it (the shared one and, with `--workers`, each
 * worker's own): {@link HTTP_SERVER_OPTIONS}, JSON answers to requests it cannot parse and to
 * CONNECT, and every header field kept. Requests are handed to {@link serveRequests}.
 */
export function createHttpServer(timeouts?: HttpTimeouts, tls?: TlsCredentials): Server {
  // An https.Server is an http.Server over TLS: the same options, events and request handling.
  const server =
    tls === undefined
      ? createServer({ ...HTTP_SERVER_OPTIONS, ...timeouts })
      : (https().createServer({
          ...HTTP_SERVER_OPTIONS,
          ...timeouts,
          ...tls,
          handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
        }) as unknown as Server);
  server.on('clientError', answerClientError);
  server.on('connect', answerConnect);
  // Node keeps only the first 1,000 header fields by default and drops the rest silently, so a key
  // sent later was never seen. Keep them all: maxHeaderSize (16 KiB, 431 beyond) bounds the block.
  server.maxHeadersCount = 0;
  return server;
}

/** Hands `server`'s requests to `serve`, those with an Expect other than 100-continue too (not Node's bare 417). */
export function serveRequests(server: Server, serve: RequestListener): void {
  server.on('request', serve);
  server.on('checkExpectation', serve);
}

function errorResponse(status: number, error: string, message: string): string {
  const body = JSON.stringify({ error, message });
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
    'content-type: application/json; charset=utf-8\r\n' +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    'connection: close\r\n\r\n' +
    body
  );
}

const HEADERS_TOO_LARGE = errorResponse(431, 'request_header_fields_too_large', 'Request headers exceed 16 KiB');
const TIMED_OUT = errorResponse(408, 'request_timeout', 'The request was not received in time');
const MALFORMED = errorResponse(400, 'bad_request', 'Malformed HTTP request');
const CONNECT_REFUSED = errorResponse(400, 'bad_request', 'CONNECT is not supported: mockapi is not a proxy');

/** Connections whose answer is written while the request's body still arrives: how to end that answer. */
const answeredEarly = new WeakMap<Duplex, () => void>();

/**
 * Writes `body` as the answer to a request whose body is still arriving (a 413 for a body over
 * the limit, any answer given without reading the body), and ends the answer only once the rest of the body has been read and thrown away.
 * Ended at once, a connection that closes after its answer (`Connection: close`) would be closed
 * under a client still sending: its unread bytes make the kernel reset the connection, which
 * often destroys the answer before the client reads it (the client sees EPIPE or ECONNRESET). A
 * keep-alive connection stays in step the same way. The wait is bounded by requestTimeout (30 s
 * from the request's start); a client that stops half-way ends it at once (see answerClientError).
 */
export function endAfterBody(req: IncomingMessage, res: ServerResponse, body: AnswerBody): void {
  res.write(body);
  if (req.complete) {
    res.end();
    return;
  }
  const socket = req.socket;
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    answeredEarly.delete(socket);
    req.removeListener('end', end);
    req.removeListener('close', end);
    res.end();
  };
  answeredEarly.set(socket, end);
  req.once('end', end);
  req.once('close', end);
  req.resume(); // read the rest, keep none of it
}

/**
 * Answers requests node:http could not parse with a JSON error and closes the connection, instead
 * of Node's bare `400` with no body. Never throws: the socket may already be gone. A connection
 * already answered (see {@link endAfterBody}) gets no second answer: its answer is ended and the
 * connection closed once it is written.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  flushWrites(); // the answer to a good request pipelined before the bad one goes out first
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const endAnswer = answeredEarly.get(socket);
  if (endAnswer !== undefined) {
    endAnswer();
    socket.end(); // after the answer, whether it was to close the connection or not: the request is broken
    return;
  }
  const response =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? HEADERS_TOO_LARGE
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? TIMED_OUT
        : MALFORMED;
  socket.end(response);
}

/**
 * Answers a CONNECT request (node:http hands those over as a bare socket, and closes it unanswered
 * when nobody listens) with a JSON 400, then closes the connection. Never throws.
 */
function answerConnect(_req: unknown, socket: Duplex): void {
  flushWrites();
  socket.on('error', () => socket.destroy());
  if (socket.writable) socket.end(CONNECT_REFUSED);
  else socket.destroy();
}
