// The last phase of a server's start: the object startMockServer returns — its addresses, `close`
// (the stop stack, unwound once), `reload`, and the in-process calls, refused once closed.
import type { ConfigRuntime } from '../answer/config-runtime.js';
import { refusedWhenClosed } from '../control/after-close.js';
import type { MockServer } from '../mock-server-types.js';
import { webhookCalls } from '../webhooks/index.js';
import type { AdminParts } from './admin.js';
import type { StartContext } from './context.js';
import type { Listening } from './listening.js';
import type { ServerParts } from './parts.js';

export function serverObject(ctx: StartContext, p: ServerParts, admin: AdminParts, listening: Listening): MockServer {
  const { stops } = ctx;
  const { runtime, control, tls, stubs, webhooks, sessions, sessionCounts, resources, clients, violations } = p;
  const { calls, stopping } = admin;
  const { front, secure } = listening;
  let closing: Promise<void> | undefined;
  readDescriptionLater(ctx, runtime, () => closing === undefined);
  return {
    url: front.url,
    port: front.port,
    ...(secure === undefined ? {} : { httpsUrl: secure.url, httpsPort: secure.port }),
    ...(tls?.ca === undefined ? {} : { ca: tls.ca, caFile: tls.caFile }),
    get config() {
      return runtime.holder.current.config;
    },
    close: () => {
      stopping.abort();
      return (closing ??= stops.unwind());
    },
    reload: () => runtime.reload(),
    adminToken: control.adminToken,
    // Once `close` is called, every call rejects at once as one to a stopped server does, doing nothing.
    ...refusedWhenClosed(
      {
        ...calls,
        ...stubs.calls(),
        webhooks: webhookCalls(webhooks, stopping.signal),
        sessions: sessions.calls(sessionCounts, front.url),
        ...resources.calls(),
      },
      () => stopping.signal.aborted,
      front.url,
    ),
    clients: () => clients.list(),
    violatedRequests: () => violations.violated,
  };
}

/** The OpenAPI description is read by the first request that needs it; its problems are logged then, as a failed reload's. */
function readDescriptionLater(ctx: StartContext, runtime: ConfigRuntime, running: () => boolean): void {
  const { logger } = ctx;
  if (runtime.holder.current.config.openapi !== undefined) {
    const late = import('../validate/late-report.js').then((m) =>
      m.readDescriptionLater(runtime.holder.current, logger, running),
    );
    late.catch((err: Error) => logger.warn(`the OpenAPI description could not be read: ${err.message}`));
  }
}
