import { EventEmitter } from 'node:events';
import { IncomingMessage, ServerResponse } from 'node:http';
import type { Target } from './targets.js';

/**
 * The socket of one injected exchange: what the response writes is kept (the head, which node
 * writes as text ahead of the body, left out), nothing is sent anywhere. It has what node:http's
 * request and response read of a socket — a remote address, `destroyed`, `writable`, cork and
 * uncork, a writable state — and nothing to read from (the request's body is in memory).
 */
class CaptureSocket extends EventEmitter {
  readonly remoteAddress = '127.0.0.1';
  readonly remoteFamily = 'IPv4';
  readonly remotePort = 0;
  readonly localAddress = '127.0.0.1';
  readonly localPort = 0;
  readonly encrypted = false;
  readonly readable = false;
  readonly writableLength = 0;
  readonly _writableState = { corked: 0, length: 0 };
  destroyed = false;
  writable = true;
  _httpMessage: ServerResponse | null = null;
  readonly chunks: Buffer[] = [];
  private headSkipped = false;

  write(
    data: string | Uint8Array,
    encoding?: BufferEncoding | ((err?: Error) => void) | null,
    done?: ((err?: Error) => void) | null,
  ): boolean {
    if (typeof encoding === 'function') [done, encoding] = [encoding, undefined];
    if (typeof data === 'string') {
      // The head comes first, alone or in front of the first text written (see OutgoingMessage._send).
      const head = (this._httpMessage as { _header?: string | null } | null)?._header;
      if (!this.headSkipped && typeof head === 'string' && data.startsWith(head)) {
        this.headSkipped = true;
        data = data.slice(head.length);
      }
      if (data.length > 0)
        this.chunks.push(Buffer.from(data, (encoding as BufferEncoding | null | undefined) ?? 'utf8'));
    } else if (data.byteLength > 0) this.chunks.push(Buffer.from(data)); // a copy: the writer may reuse its buffer
    if (typeof done === 'function') process.nextTick(done);
    return true;
  }

  cork(): void {}
  uncork(): void {}
  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
  address(): { address: string; family: string; port: number } {
    return { address: this.localAddress, family: 'IPv4', port: 0 };
  }
  end(): this {
    return this.destroy();
  }
  destroySoon(): this {
    return this.destroy();
  }
  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.writable = false;
    process.nextTick(() => this.emit('close', false));
    return this;
  }
}

/** A body written in chunked framing, unframed (only an answer that set `Transfer-Encoding: chunked` itself is framed). */
export function unchunk(framed: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < framed.length) {
    const lineEnd = framed.indexOf('\r\n', at, 'latin1');
    if (lineEnd === -1) break;
    const size = parseInt(framed.toString('latin1', at, lineEnd).split(';')[0] ?? '', 16);
    if (!(size > 0)) break;
    parts.push(framed.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/**
 * The header fields of a response head as written (`HTTP/1.1 200 OK\r\nName: value\r\n…`), names
 * in lower case: what the mock sent, whether set one by one or given to writeHead at once. Without
 * `connection`, which says how this exchange's own (absent) connection goes on.
 */
export function headPairs(head: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).toLowerCase();
    if (name !== 'connection') pairs.push([name, line.slice(colon + 1).trim()]);
  }
  return pairs;
}

/** One exchange through `handler`, without a connection: the answer's status, headers and body once it ends (or its socket closes first). */
function exchange(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  request: { method: string; url: string; headers: Record<string, string>; body?: Buffer },
): Promise<{ status: number; headers: Array<[string, string]>; body: Buffer }> {
  const socket = new CaptureSocket();
  const req = new IncomingMessage(socket as never);
  req.method = request.method;
  req.url = request.url;
  req.httpVersion = '1.1';
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  const headers: Record<string, string> = { host: 'localhost:80', ...request.headers };
  if (request.body !== undefined) headers['content-length'] = String(request.body.length);
  req.headers = headers;
  req.rawHeaders = Object.entries(headers).flat();
  if (request.body !== undefined && request.body.length > 0) req.push(request.body);
  req.push(null);
  // The whole example was sent before the handler runs: the message is complete, as node:http says of a request whose body arrived.
  req.complete = true;
  const res = new ServerResponse(req);
  // The body as written, unframed (node frames a body of unknown length in chunks otherwise).
  res.useChunkedEncodingByDefault = false;
  res.assignSocket(socket as never);
  return new Promise((resolve, reject) => {
    res.once('finish', () => {
      const pairs = headPairs((res as { _header?: string | null })._header ?? '');
      const written = Buffer.concat(socket.chunks);
      const framed = (res as { chunkedEncoding?: boolean }).chunkedEncoding === true;
      resolve({
        status: res.statusCode,
        headers: pairs,
        body: request.method === 'HEAD' ? Buffer.alloc(0) : framed ? unchunk(written) : written,
      });
      // As node:http's server does once an answer is written.
      res.detachSocket(socket as never);
      process.nextTick(() => res.emit('close'));
    });
    socket.once('close', () => reject(new Error('the connection was closed without an answer')));
    handler(req, res);
  });
}

/**
 * The mock of a verify run, asked without a socket: each example becomes a node:http request and
 * response handed to the server's own request handler (the response a real ServerResponse writing
 * into memory), so the answer comes from the same request steps a client's does — auth, match,
 * validation, dynamic answers, `errors:` — without the loopback connection, the HTTP parser or
 * the socket writes on either side. The example carries the config's key in `X-API-Key`, under
 * the base path; an answer must come within `timeoutMs`.
 */
export function injectTarget(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  basePath: string,
  apiKey: string,
  timeoutMs: number,
): Target {
  return {
    async send(request) {
      let timer: NodeJS.Timeout | undefined;
      try {
        const late = new Promise<never>(
          (_, fail) => (timer = setTimeout(() => fail(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)),
        );
        const asked = {
          method: request.method,
          url: basePath + request.path + request.query,
          headers: { ...request.headers, 'x-api-key': apiKey },
          ...(request.body === undefined ? {} : { body: request.body }),
        };
        const answer = await Promise.race([exchange(handler, asked), late]);
        return { ok: true, reply: answer };
      } catch (err) {
        return { ok: false, reason: `the mock did not answer: ${(err as Error).message}` };
      } finally {
        clearTimeout(timer);
      }
    },
    close: async () => {},
  };
}
