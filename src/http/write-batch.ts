import type { ServerResponse } from 'node:http';
import type { AnswerBody } from '../answer/answer-body.js';

/**
 * Answers go out together at the end of the event loop's I/O phase instead of one by one as each
 * is made ("flush consolidation", as Netty's FlushConsolidationHandler does).
 *
 * Why: a client on another core that waits for an answer sleeps in `epoll_wait`, and the write
 * that makes its socket readable has to wake it: a cross-core interrupt, which in a virtual machine
 * is an exit to the hypervisor. Written one by one, between answers that take tens of microseconds
 * to make, nearly every write finds the client asleep again and pays that wake-up. Measured under
 * `wrk -c50`, `writev` cost 5 µs a request in a bare node:http server and 17 µs in one whose answers
 * took 30 µs to make, for the same bytes. Written together, the first write wakes the client and
 * the rest find it awake. The price is latency within one loop turn: an answer made while reading
 * requests waits for the others made in the same turn (microseconds each, and at most
 * {@link MAX_HELD_ANSWERS} − 1 of them), never for new I/O; one made in a timer (a delayed endpoint)
 * waits at most for the requests of the next I/O phase.
 *
 * Only the socket write moves. The head is built at once by `writeHead` (so header lists that are
 * reused between answers are copied before they change, and `headersSent` holds), and everything
 * done before the answer (journal entry, log line, limit counts) keeps its order. Anything that
 * writes to or closes a socket directly (a fault, a parse error's 400) calls {@link flushWrites}
 * first, so a pipelined answer queued before it still goes out before it; so do a stop that cuts
 * connections and a journal wait that answers (control/wait.ts), so that a wait's answer never
 * arrives before the answers to the requests it reports.
 */

/**
 * Most answers held back in one turn: the next one writes them first. A turn can
 * read a request from every connection (hundreds, more than a thousand events per poll), and an
 * answer made early in a long turn would otherwise wait for every later one to be made — a delay
 * that grows with the connection count and shows in the tail latency. Written 32 at a time, an
 * answer waits for at most 31 others, while the wake-up each write costs the client is still
 * shared by 32 answers.
 */
export const MAX_HELD_ANSWERS = 32;

let queue: ServerResponse[] = [];
let bodies: AnswerBody[] = [];
let spareQueue: ServerResponse[] = [];
let spareBodies: AnswerBody[] = [];
let scheduled = false;

/**
 * Ends `res` (its head already written by `writeHead`) with `body` before the loop next waits for
 * I/O, or sooner: {@link MAX_HELD_ANSWERS} held answers are written as the next one is queued.
 */
export function endSoon(res: ServerResponse, body: AnswerBody): void {
  // Written when the next one comes rather than as the last is queued: what each held answer's
  // request did after queueing it (its log line) has then been done, as at the end of a turn.
  if (queue.length >= MAX_HELD_ANSWERS) flushWrites();
  queue.push(res);
  bodies.push(body);
  if (!scheduled) {
    scheduled = true;
    setImmediate(flushTurn);
  }
}

function flushTurn(): void {
  scheduled = false;
  flushWrites();
}

/** Writes every queued answer now, in the order they were queued. */
export function flushWrites(): void {
  if (queue.length === 0) return;
  // Swapped first, so an answer queued while these go out waits for the next turn.
  const responses = queue;
  const ends = bodies;
  queue = spareQueue;
  bodies = spareBodies;
  for (let i = 0; i < responses.length; i++) {
    const res = responses[i] as ServerResponse;
    // Node skips a response whose socket is gone. `end` does not throw for the bodies `send`
    // passes; if it ever did, that one connection is closed and the rest still go out.
    try {
      res.end(ends[i]);
    } catch {
      res.destroy();
    }
  }
  responses.length = 0;
  ends.length = 0;
  spareQueue = responses;
  spareBodies = ends;
}
