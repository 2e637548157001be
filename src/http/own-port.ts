import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHttpServer, serveRequests } from './http-limits.js';
import { formatUrl } from './listen.js';
import { flushWrites } from './write-batch.js';

/** A listener of one process alone, beside the port it shares. */
export interface OwnPort {
  url: string;
  close(): Promise<void>;
}

/**
 * For a `serve --workers` worker: the same handler on a loopback port of its own
 * (`exclusive`, so node:cluster does not share it). The worker registers this URL, so rotate-key
 * polls each worker's health and confirms only once every worker serves the new key — on the
 * shared port, its polls would reach whichever worker the primary hands them to.
 */
export function listenOwnPort(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<OwnPort> {
  // Built as the shared port is: among the rest, the JSON 400 after the answers queued before it
  // (Node's own 400 would take the place of a pipelined answer not yet ended).
  const server = createHttpServer();
  serveRequests(server, handler);
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      done({
        url: formatUrl('127.0.0.1', port),
        close: () => {
          const closed = new Promise<void>((r) => server.close(() => r()));
          flushWrites(); // answers already made go out before their connections are closed
          server.closeAllConnections();
          return closed;
        },
      });
    });
  });
}
