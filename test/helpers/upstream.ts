// Real upstreams for the record-and-proxy tests: node:http and node:https servers on 127.0.0.1,
// each remembering what it received; a test CA and a leaf made with the openssl CLI in a temp dir.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  rawHeaders: string[];
  body: Buffer;
}

export interface Upstream {
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

export type UpstreamHandler = (req: Seen, res: ServerResponse) => void;

function serve(server: Server, scheme: string, seen: Seen[]): Promise<Upstream> {
  return new Promise((done) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      done({
        url: `${scheme}://127.0.0.1:${port}`,
        seen,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections?.();
            server.close(() => r());
          }),
      });
    });
  });
}

function handlerOf(handler: UpstreamHandler, seen: Seen[]) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
      };
      seen.push(s);
      handler(s, res);
    });
  };
}

/** A plain-HTTP upstream on 127.0.0.1. */
export function startUpstream(handler: UpstreamHandler): Promise<Upstream> {
  const seen: Seen[] = [];
  return serve(createHttp(handlerOf(handler, seen)), 'http', seen);
}

/** A test CA and a leaf for 127.0.0.1 it signed, written under `dir` (ca.pem, key.pem, cert.pem). */
export function makeTestCa(dir: string): { caFile: string; key: string; cert: string } {
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  run(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'ca-key.pem',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=mockapi test CA',
  );
  writeFileSync(join(dir, 'leaf.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n');
  run(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'key.pem',
    '-out',
    'leaf.csr',
    '-subj',
    '/CN=127.0.0.1',
  );
  run(
    'x509',
    '-req',
    '-in',
    'leaf.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca-key.pem',
    '-CAcreateserial',
    '-out',
    'cert.pem',
    '-days',
    '2',
    '-extfile',
    'leaf.ext',
  );
  return {
    caFile: join(dir, 'ca.pem'),
    key: readFileSync(join(dir, 'key.pem'), 'utf8'),
    cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
  };
}

/** An HTTPS upstream on 127.0.0.1 with the given key and certificate. */
export function startHttpsUpstream(tls: { key: string; cert: string }, handler: UpstreamHandler): Promise<Upstream> {
  const seen: Seen[] = [];
  return serve(createHttps({ key: tls.key, cert: tls.cert }, handlerOf(handler, seen)), 'https', seen);
}

/** Child environment for the tests: no proxy from the machine running them. */
export const NO_PROXY_ENV: Record<string, string> = {
  HTTP_PROXY: '',
  HTTPS_PROXY: '',
  http_proxy: '',
  https_proxy: '',
  NO_PROXY: '',
  no_proxy: '',
};
