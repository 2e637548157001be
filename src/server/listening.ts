// The listening phase of a server's start: the same handler on every port (HTTP, HTTPS, a worker's
// own), one request path. Requests are held at each front's gate until the server opens them.
import { startHttpFront, type HttpFront } from '../http/http-front.js';
import type { OwnPort } from '../http/own-port.js';
import type { StartContext } from './context.js';
import type { Foundation } from './foundation.js';
import type { RequestHandler } from './request-handler.js';

export interface Listening {
  /** The HTTP front: the server's `url` and `port`. */
  front: HttpFront;
  /** The HTTPS front, when HTTPS is on. */
  secure: HttpFront | undefined;
  /** A `serve --workers` worker's own port. */
  own: OwnPort | undefined;
  /** Every front, opened together once the server is ready to answer. */
  fronts: HttpFront[];
}

export async function listen(ctx: StartContext, p: Foundation, handler: RequestHandler): Promise<Listening> {
  const { options, config, host } = ctx;
  const { https, tls } = p;
  // The same handler on every port (HTTP, HTTPS, a worker's own): one request path. They stop together.
  const fronts: HttpFront[] = [];
  let own: OwnPort | undefined;
  ctx.stops.push(async () => {
    p.control.admin.close(); // event streams and waits never finish on their own
    p.hub?.close(); // calls to the other workers resolve
    await Promise.all(fronts.map((f) => (ctx.opened ? f.close() : f.abort())));
    await own?.close();
  });
  const front = await startHttpFront(handler, {
    port: options.port ?? config.server.port,
    host,
    timeouts: options.httpTimeouts,
  });
  fronts.push(front);
  const secure =
    https === undefined || tls === undefined
      ? undefined
      : await startHttpFront(handler, { port: https.port, host, timeouts: options.httpTimeouts, tls: tls.credentials });
  if (secure !== undefined) fronts.push(secure);
  own = options.ownPort ? await import('../http/own-port.js').then((m) => m.listenOwnPort(handler)) : undefined;
  return { front, secure, own, fronts };
}
