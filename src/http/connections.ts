import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { Socket } from 'node:net';

/**
 * How long, once the server is stopping, a client may still take to finish sending its request
 * or to read its answer. A stop may take 2 seconds plus the longest in-flight endpoint
 * delay; this leaves the rest for writing usage and the last log lines.
 */
export const CLIENT_GRACE_MS = 1000;
const SWEEP_MS = 100;

/** Holds requests until {@link RequestGate.open}, then answers them in arrival order. */
export interface RequestGate {
  handler: RequestListener;
  /** From now on requests go straight to the handler; those held so far are answered first. */
  open(): void;
}

/**
 * A server must not answer before it is ready: registered for rotate-key, watching its config,
 * with signal handlers in place. It has to listen earlier, to learn its port,
 * so requests that arrive in between wait here. Holding them, not refusing them, means a client
 * that polls for the server's start just sees a slower first answer.
 */
export function createRequestGate(handler: RequestListener): RequestGate {
  let held: [IncomingMessage, ServerResponse][] | undefined = [];
  return {
    handler(req, res) {
      if (held === undefined) handler(req, res);
      else held.push([req, res]);
    },
    open() {
      const waiting = held ?? [];
      held = undefined;
      // A client that gave up meanwhile gets nothing, and its request is not counted.
      for (const [req, res] of waiting) if (!res.destroyed) handler(req, res);
    },
  };
}

/**
 * The TCP connection under a socket: a TLS socket's own (Node keeps it as `_parent`), else the
 * socket itself. A TCP reset can only be sent on the TCP connection.
 */
export function tcpOf(socket: Socket): Socket {
  const parent = (socket as Socket & { _parent?: unknown })._parent;
  return parent instanceof Socket ? parent : socket;
}

/** Responses a stop closes at once instead of waiting for them: `hang` and `slow` faults. */
const abandoned = new WeakSet<ServerResponse>();

/**
 * Marks `res` as one a graceful stop does not wait for: a `hang` fault would otherwise hold the stop
 * for its `after` (5 min by default), a `slow` one for as long as its body takes.
 */
export function abandonOnStop(res: ServerResponse): void {
  abandoned.add(res);
}

/** Since when, during a stop, a response has been waiting on its client, and for what. */
interface Waiting {
  phase: 'receiving' | 'sending';
  since: number;
}

/**
 * Per connection: its responses, kept from arrival until done. Pruned, not told: a response that
 * is done is dropped when the next request arrives on the connection or when a stop looks, so a
 * request costs no listener; a stop then listens to the ones still in progress.
 */
interface Connection {
  responses: Map<ServerResponse, Waiting | undefined>;
}

/** Done: everything written has left (or the connection is gone), so a stop need not wait for it. */
function isDone(res: ServerResponse): boolean {
  return res.destroyed || res.writableFinished;
}

function prune(connection: Connection): void {
  for (const res of connection.responses.keys()) if (isDone(res)) connection.responses.delete(res);
}

/** Counts the requests in progress on each connection, so that a stop can close every other one. */
export interface ConnectionTracker {
  /** Wraps the request handler; every request must pass through it. */
  track(handler: RequestListener): RequestListener;
  /**
   * Stops listening and closes each connection as soon as nothing is in progress on it: at once for
   * idle ones and for clients that sent nothing or only part of their headers, after its answer for
   * the others. A client still sending its request, or not reading its answer, gets
   * {@link CLIENT_GRACE_MS}. Resolves when every connection is closed.
   */
  close(): Promise<void>;
}

/**
 * Node stops enforcing headersTimeout and requestTimeout once `server.close()` is called (their
 * timer is the listening server's), and `closeIdleConnections()` leaves a connection alone while a
 * request is being received on it — so without this a silent or slow connection kept a stopping
 * server alive for ever.
 */
export function trackConnections(server: Server, secure = false, graceMs = CLIENT_GRACE_MS): ConnectionTracker {
  const connections = new Map<Socket, Connection>();
  let stopping = false;
  let stopStarted = 0;
  // Over TLS, requests arrive on the TLS socket made once the handshake is done; until then only
  // the TCP connection exists, and nothing was asked on it: a stop closes it at once.
  const handshaking = new Set<Socket>();

  const accept = (socket: Socket) => {
    // Accepted just before the listener closed: nothing was asked on it yet.
    if (stopping) return void socket.destroy();
    connections.set(socket, { responses: new Map() });
    socket.once('close', () => connections.delete(socket));
  };
  if (!secure) server.on('connection', accept);
  else {
    server.on('connection', (tcp: Socket) => {
      if (stopping) return void tcp.destroy();
      handshaking.add(tcp);
      tcp.once('close', () => handshaking.delete(tcp));
    });
    server.on('secureConnection', (socket: Socket) => {
      handshaking.delete(tcpOf(socket));
      accept(socket);
    });
  }

  function release(socket: Socket): void {
    // Ends after what is written has been sent; a client that never closes its side is cut by the sweep.
    if (!socket.destroyed) socket.destroySoon();
  }

  /** During a stop: the connection is released once `res`, and every other response on it, is done. */
  function releaseAfter(socket: Socket, connection: Connection, res: ServerResponse): void {
    res.once('close', () => {
      connection.responses.delete(res);
      prune(connection);
      if (connection.responses.size === 0) release(socket);
    });
  }

  function track(handler: RequestListener): RequestListener {
    return (req, res) => {
      const socket = req.socket;
      const connection = connections.get(socket);
      if (connection !== undefined) {
        // Usually the one before, answered: a keep-alive connection keeps no history.
        if (connection.responses.size > 0) prune(connection);
        connection.responses.set(res, undefined);
        if (stopping) releaseAfter(socket, connection, res);
      }
      // Tell the client not to send another request on this connection.
      if (stopping) res.shouldKeepAlive = false;
      handler(req, res);
    };
  }

  /** Cuts connections whose client has had its grace: still sending, or not reading the answer. */
  function sweep(): void {
    const now = Date.now();
    for (const [socket, connection] of connections) {
      if (connection.responses.size === 0) {
        if (now - stopStarted >= graceMs) socket.destroy();
        continue;
      }
      for (const [res, waiting] of connection.responses) {
        if (abandoned.has(res)) {
          socket.destroy();
          break;
        }
        const phase = !res.req.complete
          ? 'receiving'
          : res.writableEnded && !res.writableFinished
            ? 'sending'
            : undefined;
        if (phase === undefined) continue; // the endpoint's delay: it ends by itself
        if (waiting?.phase !== phase) {
          // A request still arriving has been waited on since the stop began; an answer since now.
          connection.responses.set(res, { phase, since: phase === 'receiving' ? stopStarted : now });
        } else if (now - waiting.since >= graceMs) {
          socket.destroy();
        }
      }
    }
  }

  let closing: Promise<void> | undefined;
  function close(): Promise<void> {
    closing ??= new Promise<void>((done) => {
      stopping = true;
      stopStarted = Date.now();
      const timer = setInterval(sweep, SWEEP_MS);
      server.close(() => {
        clearInterval(timer);
        done();
      });
      for (const tcp of handshaking) tcp.destroy();
      for (const [socket, connection] of connections) {
        prune(connection);
        if (connection.responses.size === 0 || [...connection.responses.keys()].every((res) => abandoned.has(res)))
          socket.destroy();
        else {
          for (const res of connection.responses.keys()) {
            if (!res.headersSent) res.shouldKeepAlive = false;
            releaseAfter(socket, connection, res);
          }
        }
      }
    });
    return closing;
  }

  return { track, close };
}
