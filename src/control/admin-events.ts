/**
 * `GET /__mockapi/events`: the control plane's events as a server-sent event stream, with a
 * heartbeat, and a bound on how far its reader may fall behind; the calls held open (event
 * streams and waits) that the admin API's `close` and `closeSession` end.
 */
import type { ServerResponse } from 'node:http';
import type { ControlEvent } from './control-plane.js';
import { STREAMING, type AdminSession } from './admin-routes.js';

/** The calls held open (event streams and waits): how each ends (with why its session was dropped), and its session's id. */
export type OpenCalls = Map<(dropped?: string) => void, string>;

const HEARTBEAT_MS = 15_000;
/**
 * How far an event stream's reader may fall behind: the bytes written to it that its connection
 * has not yet sent (beyond what the kernel's socket buffers hold). A reader that stops reading
 * (`mockapi requests -f | less` left paused) would otherwise make the server keep every event for
 * it, without bound. Past this, the stream is ended with {@link DROPPED}.
 */
export const EVENT_BACKLOG_LIMIT = 4 * 1024 * 1024;
/** The stream's last words when its reader fell behind: an SSE comment, which readers that do not look for it skip. */
export const DROPPED = `: dropped: this reader fell more than ${EVENT_BACKLOG_LIMIT / (1024 * 1024)} MiB behind; reconnect to go on\n\n`;
/** How long a dropped stream's connection may take to send what it holds before it is cut. */
const DROPPED_GRACE_MS = 10_000;

/** Streams `s`'s events to `res` until either end goes; held in `open` meanwhile. `unwatch` ends the other workers' forwarding. */
export function streamEvents(
  res: ServerResponse,
  s: AdminSession,
  open: OpenCalls,
  unwatch?: () => void,
): typeof STREAMING {
  const control = s.plane;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  });
  res.write(': mockapi events\n\n');
  // Every write checks the backlog first: what the server holds for this reader stays under the
  // limit plus one event, and a reader that fell behind is told so and let go.
  const write = (text: string): void => {
    if (res.writableLength <= EVENT_BACKLOG_LIMIT) res.write(text);
    else drop();
  };
  const unsubscribe = control.subscribe((event: ControlEvent) =>
    write(`event: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`),
  );
  const heartbeat = setInterval(() => write(': keep-alive\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  let ended = false;
  const end = (last?: string) => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    unsubscribe();
    unwatch?.();
    open.delete(dropped); // (the function it was held open by)
    if (!res.writableEnded) res.end(last);
  };
  // A session dropped under its stream: the reader is told why, in a comment as the drop is.
  const dropped = (reason?: string): void => end(reason === undefined ? undefined : `: ${reason}\n\n`);
  const drop = (): void => {
    end(DROPPED);
    // A reader that still does not read would hold the backlog for ever: cut it after a grace.
    const cut = setTimeout(() => res.destroy(), DROPPED_GRACE_MS);
    cut.unref();
    res.once('close', () => clearTimeout(cut));
  };
  open.set(dropped, s.id);
  res.once('close', () => end());
  return STREAMING;
}
