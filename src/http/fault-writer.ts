import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultConfig } from '../config/types.js';
import { bodyBytes, type AnswerBody } from '../answer/answer-body.js';
import { abandonOnStop, tcpOf } from './connections.js';
import { flushWrites } from './write-batch.js';

/** Longest pause between two pieces of a `slow` answer; smaller rates send one byte per pause. */
const SLOW_TICK_MS = 100;

/**
 * Writes `fault` in place of the answer `status`/`headers`/`body`, at the socket level,
 * so a client sees what a real network gives it: `reset` a TCP RST (ECONNRESET), `close` a FIN with
 * nothing sent (an empty reply), `hang` nothing until `after` (a timeout), `slow` the answer at
 * `bytesPerSecond`, `truncate` the head (with the full content-length) and part of the body, then
 * a FIN. Every timer is cleared when the connection closes, whoever closes it; a graceful stop
 * does not wait for a `hang` or `slow` answer (see {@link abandonOnStop}). Returns the log note.
 * `onEnd` (a streamed answer, journaled when it ends) is told once how the answer ended, with the
 * body bytes written by then and the note: a `slow` answer once it has all been written
 * (`complete`) or when the client left first (`client`); a `hang` when its `after` closed the
 * connection (`reset`) or the client left first (`client`); `reset`, `close` and `truncate` at
 * once (`reset`: the connection broke off the answer).
 */
export function writeFault(
  req: IncomingMessage,
  res: ServerResponse,
  fault: FaultConfig,
  status: number,
  headers: readonly string[],
  answer: AnswerBody,
  onEnd?: (bytes: number, ended: 'complete' | 'client' | 'reset', note: string) => void,
): string {
  const socket = req.socket;
  const body = bodyBytes(answer);
  flushWrites(); // a pipelined answer queued before this one goes out first
  const now = (note: string, bytes = 0): string => {
    onEnd?.(bytes, 'reset', note);
    return note;
  };

  switch (fault.kind) {
    case 'reset':
      tcpOf(socket).resetAndDestroy(); // over TLS too: the reset is the TCP connection's
      return now('fault: reset');
    case 'close':
      socket.destroySoon();
      return now('fault: close');
    case 'hang': {
      abandonOnStop(res);
      const note = `fault: hang (closed after ${fault.afterMs} ms)`;
      let closedHere = false;
      const timer = setTimeout(() => {
        closedHere = true;
        socket.destroy();
      }, fault.afterMs);
      res.once('close', () => {
        clearTimeout(timer);
        onEnd?.(0, closedHere ? 'reset' : 'client', note);
      });
      return note;
    }
    case 'truncate': {
      const sent = body.length === 0 ? 0 : Math.min(fault.bytes ?? Math.floor(body.length / 2), body.length - 1);
      res.writeHead(status, headers as string[]);
      if (req.method === 'HEAD') res.flushHeaders();
      else res.write(body.subarray(0, sent));
      socket.destroySoon();
      return now(`fault: truncate (${sent} of ${body.length} bytes)`, req.method === 'HEAD' ? 0 : sent);
    }
    case 'slow': {
      abandonOnStop(res);
      const note = `fault: slow (${fault.bytesPerSecond} bytes/s)`;
      res.writeHead(status, headers as string[]);
      if (req.method === 'HEAD') res.end();
      const sent = req.method === 'HEAD' ? () => 0 : sendSlowly(res, body, fault.bytesPerSecond);
      if (onEnd !== undefined)
        whenEnded(
          res,
          () => onEnd(sent(), 'complete', note),
          () => onEnd(sent(), 'client', note),
        );
      return note;
    }
  }
}

/** Calls `finished` once the answer has all been handed to the system, or `closed` if the connection closed first. */
function whenEnded(res: ServerResponse, finished: () => void, closed: () => void): void {
  let told = false;
  const once = (tell: () => void) => (): void => {
    if (told) return;
    told = true;
    tell();
  };
  res.once('finish', once(finished));
  res.once('close', once(closed));
}

/**
 * Writes `body` in pieces, one every {@link SLOW_TICK_MS} at most, so that it takes length / rate
 * seconds; returns how many of its bytes have been written so far.
 */
function sendSlowly(res: ServerResponse, body: Buffer, bytesPerSecond: number): () => number {
  const piece = Math.max(1, Math.floor((bytesPerSecond * SLOW_TICK_MS) / 1000));
  const pauseMs = (piece * 1000) / bytesPerSecond;
  let offset = 0;
  let timer: NodeJS.Timeout | undefined;
  const next = (): void => {
    if (res.destroyed) return;
    const end = Math.min(body.length, offset + piece);
    if (end >= body.length) {
      res.end(body.subarray(offset));
      offset = body.length;
      return;
    }
    res.write(body.subarray(offset, end));
    offset = end;
    timer = setTimeout(next, pauseMs);
  };
  res.once('close', () => clearTimeout(timer));
  // The head goes at once; the first piece after one pause, as from a link of this speed.
  timer = setTimeout(next, body.length === 0 ? 0 : pauseMs);
  return () => offset;
}
