import { connect, type PeerCertificate } from 'node:tls';
import type { RawExchange } from './raw-http.js';

/** A {@link RawExchange} over TLS, with the certificate the server presented. */
export interface TlsExchange extends RawExchange {
  /** Set once the handshake succeeded (verified against `ca`). */
  peer?: PeerCertificate;
}

/**
 * Sends one GET (Connection: close) over a fresh TLS connection that trusts only `ca`, and records
 * everything until the connection ends, as rawGet does over TCP.
 */
export function tlsGet(
  url: string,
  path: string,
  ca: string,
  headers: Record<string, string> = {},
): Promise<TlsExchange> {
  const { hostname, port } = new URL(url);
  const host = hostname.replace(/^\[|\]$/g, '');
  return new Promise((done) => {
    const started = performance.now();
    const socket = connect({
      host,
      port: Number(port),
      ca,
      ...(host === 'localhost' ? { servername: 'localhost' } : {}),
    });
    const chunks: Buffer[] = [];
    let peer: PeerCertificate | undefined;
    let finished = false;
    const finish = (ended: RawExchange['ended'], errorCode?: string): void => {
      if (finished) return;
      finished = true;
      socket.destroy();
      done({
        bytes: Buffer.concat(chunks),
        pieces: chunks.length,
        ended,
        ms: performance.now() - started,
        ...(errorCode === undefined ? {} : { errorCode }),
        ...(peer === undefined ? {} : { peer }),
      });
    };
    socket.on('secureConnect', () => {
      peer = socket.getPeerCertificate();
      const head = Object.entries({ host: `${hostname}:${port}`, connection: 'close', ...headers })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      socket.write(`GET ${path} HTTP/1.1\r\n${head}\r\n`);
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => finish('end'));
    socket.on('error', (err: NodeJS.ErrnoException) => finish('error', err.code));
    socket.on('close', () => finish('end'));
  });
}
