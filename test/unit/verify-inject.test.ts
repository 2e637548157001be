// verify's mock is asked without a socket (src/verify/inject.ts): a real node:http request and
// response handed to a request handler, the answer read from what the response wrote. Each way a
// handler writes an answer comes back as a client would read it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { headPairs, injectTarget, unchunk } from '../../src/verify/inject.js';
import type { Sent } from '../../src/verify/targets.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const ask = (
  handler: Handler,
  request: Partial<{ method: string; path: string; query: string; headers: Record<string, string>; body: Buffer }> = {},
  timeoutMs = 2000,
): Promise<Sent> =>
  injectTarget(handler, '/mock', 'mk_key', timeoutMs).send({
    method: 'GET',
    path: '/users/42',
    query: '',
    headers: {},
    ...request,
  });

function reply(sent: Sent): { status: number; headers: Record<string, string>; body: string } {
  if (!sent.ok) throw new Error(sent.reason);
  return {
    status: sent.reply.status,
    headers: Object.fromEntries(sent.reply.headers),
    body: sent.reply.body.toString('utf8'),
  };
}

describe('verify: the mock asked without a socket', () => {
  it('headers given to writeHead at once, and set one by one, both come back; the request carries the key under the base path', async () => {
    const seen: Array<string | undefined> = [];
    const r = reply(
      await ask(
        (req, res) => {
          seen.push(req.url, String(req.headers['x-api-key']), req.socket.remoteAddress, req.method);
          res.setHeader('x-one', 'a');
          res.writeHead(201, { 'content-type': 'application/json', 'x-two': ['b', 'c'] });
          res.end('{"id":42}');
        },
        { query: '?expand=tags' },
      ),
    );
    expect(seen).toEqual(['/mock/users/42?expand=tags', 'mk_key', '127.0.0.1', 'GET']);
    expect(r.status).toBe(201);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['x-one']).toBe('a');
    expect(r.headers.connection).toBeUndefined();
    expect(r.body).toBe('{"id":42}');
  });

  it('a body written in several writes, text and bytes, arrives whole; the response emits close after finish', async () => {
    let closed = false;
    const r = reply(
      await ask((_req, res) => {
        res.once('close', () => (closed = true));
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: é\n\n');
        res.write(Buffer.from('data: 2\n\n'));
        setImmediate(() => res.end('data: end\n\n'));
      }),
    );
    expect(r.body).toBe('data: é\n\ndata: 2\n\ndata: end\n\n');
    await new Promise((done) => setImmediate(done));
    expect(closed).toBe(true);
  });

  it('a request body is readable with its Content-Length; an answer framed in chunks by the handler is unframed', async () => {
    const r = reply(
      await ask(
        (req, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (c: Buffer) => chunks.push(c));
          req.on('end', () => {
            res.writeHead(200, {
              'transfer-encoding': 'chunked',
              'content-type': 'text/plain',
              'x-length': String(req.headers['content-length']),
            });
            res.write('got ');
            res.end(Buffer.concat(chunks));
          });
        },
        { method: 'POST', body: Buffer.from('{"a":1}'), headers: { 'content-type': 'application/json' } },
      ),
    );
    expect(r.headers['x-length']).toBe('7');
    expect(r.body).toBe('got {"a":1}');
  });

  it('HEAD answers have no body; a handler that destroys the response is a failure in words; one that never answers times out', async () => {
    expect(
      reply(
        await ask(
          (_req, res) =>
            res.writeHead(200, { 'content-type': 'application/json', 'content-length': '9' }).end('{"id":42}'),
          { method: 'HEAD' },
        ),
      ).body,
    ).toBe('');
    expect(await ask((_req, res) => res.destroy())).toEqual({
      ok: false,
      reason: 'the mock did not answer: the connection was closed without an answer',
    });
    expect(await ask(() => undefined, {}, 50)).toEqual({
      ok: false,
      reason: 'the mock did not answer: no answer within 50 ms',
    });
  });

  it('headPairs reads a head as written; unchunk reads chunked framing', () => {
    expect(headPairs('HTTP/1.1 200 OK\r\nContent-Type: a/b\r\nX-A: 1: 2\r\nConnection: close\r\n\r\n')).toEqual([
      ['content-type', 'a/b'],
      ['x-a', '1: 2'],
    ]);
    expect(unchunk(Buffer.from('4\r\nabcd\r\n3;x=y\r\nefg\r\n0\r\n\r\n')).toString()).toBe('abcdefg');
  });
});
