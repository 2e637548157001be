import type { RequestListener } from 'node:http';
import { createRequestGate, trackConnections } from './connections.js';
import { createHttpServer, serveRequests, type HttpTimeouts, type TlsCredentials } from './http-limits.js';
import { flushWrites } from './write-batch.js';
import { formatUrl, HTTPS_PORT, listen } from './listen.js';

/** The listening socket of a mock server, with the HTTP edges that come before the handler. */
export interface HttpFront {
  /** Base URL, e.g. `http://127.0.0.1:4010`. */
  readonly url: string;
  readonly port: number;
  /** Requests held since listening are answered now, in arrival order; later ones go straight through. */
  open(): void;
  /**
   * Stops listening and closes every connection as soon as nothing is in progress on it (see
   * `trackConnections`); resolves when all are closed.
   */
  close(): Promise<void>;
  /** Closes every connection at once, held requests included: for a start that failed after listening. */
  abort(): Promise<void>;
}

/**
 * Listens on `host:port` (0 = any free port) and serves `handler` once {@link HttpFront.open} is
 * called. The server must listen before it is ready, to learn its port (it registers with it), so
 * requests that arrive meanwhile wait at a gate instead of being refused. Rejects with a
 * `ListenError` when it cannot listen. With `tls`, the same over HTTPS.
 */
export async function startHttpFront(
  handler: RequestListener,
  where: { port: number; host: string; timeouts?: HttpTimeouts; tls?: TlsCredentials },
): Promise<HttpFront> {
  const gate = createRequestGate(handler);
  const server = createHttpServer(where.timeouts, where.tls);
  const connections = trackConnections(server, where.tls !== undefined);
  serveRequests(server, connections.track(gate.handler));

  await listen(server, where.port, where.host, where.tls === undefined ? undefined : HTTPS_PORT);
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: formatUrl(where.host, port, where.tls === undefined ? 'http' : 'https'),
    port,
    open: () => gate.open(),
    close: () => connections.close(),
    async abort() {
      const stopped = connections.close();
      flushWrites(); // answers already made go out before their connections are cut
      server.closeAllConnections();
      await stopped;
    },
  };
}
