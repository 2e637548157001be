import type { ServerResponse } from 'node:http';
import { abandonOnStop } from '../http/connections.js';
import { endSoon, flushWrites } from '../http/write-batch.js';
import type { RenderedStream, StreamFaultPlan } from './rendered.js';
import type { StreamEnd, StreamSummary } from '../wire-types.js';

export type { StreamEnd, StreamSummary };

/** Text of the stream kept for the journal (which keeps 64 KiB of an answer). */
const WRITTEN_KEPT = 64 * 1024;

/**
 * Most characters of due events written at once: a stream whose events are all due (`gap: 0`)
 * goes out in writes of this size, each made when the one before has been taken by the socket, so
 * a client that stops reading holds one write, not the whole stream.
 */
const BATCH_CHARS = 64 * 1024;

/** One stream to write. */
export interface StreamRun {
  readonly res: ServerResponse;
  readonly status: number;
  readonly headers: readonly string[];
  readonly rendered: RenderedStream;
  readonly fault?: StreamFaultPlan;
  /** A HEAD request: the head only. */
  readonly headOnly: boolean;
  /** `performance.now()` when the request arrived. */
  readonly started: number;
  /** Called once, when the stream has ended whichever way: its summary, the text written, notes. */
  readonly onEnd: (summary: StreamSummary, written: string, notes: readonly string[]) => void;
}

/**
 * Writes a stream: the head and first event after the first-byte wait, then each event when it
 * is due, each framed as it goes out. Events due together go out in writes of at most
 * {@link BATCH_CHARS}; a stream that fits in its first write (every event due at once, no fault:
 * `gap: 0`) is ended as any answer is, with the loop turn's other answers (http/write-batch.ts),
 * and one the same for every request writes the one buffer made at load. A slow reader is
 * honoured: while the socket's buffer is full nothing more is framed or written, and later events
 * go out that much later (noted). A stream fault acts once `after` events are out, when
 * the next event would have been due: `cut`
 * ends the answer cleanly, `reset` sends a TCP reset, `error` writes the error event and ends,
 * `stall` pauses for its `for` and then goes on. Every timer and listener is cleared when the
 * client leaves; a graceful stop closes the stream at once.
 */
export function startStream(run: StreamRun): void {
  const { res, rendered, fault } = run;
  const { waits } = rendered;
  const total = rendered.count;
  let next = 0;
  let timer: NodeJS.Timeout | undefined;
  let soon: NodeJS.Immediate | undefined;
  let firstByteMs: number | null = null;
  let written = '';
  let stalled = false;
  /** Whether the head has gone out (with events, or alone). */
  let flushed = false;
  let blockedSince = 0;
  let blockedMs = 0;
  let done = false;
  /** Whether the stream outlived its first turn: it has a timer or listeners to clear. */
  let listening = false;
  const notes: string[] = [];

  abandonOnStop(res);

  const finish = (ended: StreamEnd): void => {
    if (done) return;
    done = true;
    if (listening) {
      clearTimeout(timer);
      if (soon !== undefined) clearImmediate(soon);
      res.off('drain', onDrain);
      res.off('close', onClose);
    }
    if (blockedMs > 0)
      notes.push(`stream: the client read slowly; later events went out ${Math.round(blockedMs)} ms late`);
    run.onEnd({ events: total, sent: next, ended, firstByteMs, ms: performance.now() - run.started }, written, notes);
  };
  const onClose = (): void => finish('client');
  const onDrain = (): void => {
    blockedMs += performance.now() - blockedSince;
    schedule();
  };

  /** Acts on the fault when its time has come; true when the stream stops here. */
  const applyFault = (): boolean => {
    if (fault === undefined || !faultDue()) return false;
    const { kind } = fault.fault;
    if (kind === 'stall') {
      stalled = true;
      notes.push(`stream fault: stall (${fault.fault.forMs ?? 0} ms after ${events(next)})`);
      timer = setTimeout(step, fault.fault.forMs ?? 0);
      return true;
    }
    notes.push(`stream fault: ${kind} after ${events(next)}`);
    if (kind === 'reset') {
      finish('reset');
      // The events written are still in Node's buffers (a response corks its socket until the
      // next tick): the reset waits until they have reached the kernel, so the client gets them
      // and then the reset, as from a server that crashed mid-stream.
      const socket = res.socket;
      if (socket !== null) socket.write('', () => void (socket.destroyed ? undefined : socket.resetAndDestroy()));
      return true;
    }
    const tail = kind === 'error' ? rendered.errorChunk(fault.fault) : '';
    if (written.length < WRITTEN_KEPT) written += tail;
    finish(kind);
    res.end(tail);
    return true;
  };

  /** Writes every event that is due now; stops at a wait, a full buffer, a fault or the end. */
  function step(): void {
    timer = undefined;
    soon = undefined;
    if (done) return;
    if (firstByteMs === null) {
      res.writeHead(run.status, run.headers as string[]); // builds the head; nothing is written yet
      firstByteMs = performance.now() - run.started;
      if (run.headOnly) {
        finish('complete');
        return void endSoon(res, '');
      }
    }
    // A stream the same for every request, all due now and without a fault: its bytes, made at load.
    if (next === 0 && fault === undefined && rendered.whole !== undefined) {
      next = total;
      written = rendered.whole.text;
      finish('complete');
      return void endSoon(res, rendered.whole.bytes);
    }
    // The events due now (up to the fault's place) go out in one write: `gap: 0` costs one write.
    const opening = next === 0 && !flushed;
    let batch = '';
    while (next < total && !faultDue()) {
      batch += rendered.chunk(next++);
      if (next < total && ((waits[next] ?? 0) > 0 || batch.length >= BATCH_CHARS)) break;
    }
    if (batch !== '') {
      if (written.length < WRITTEN_KEPT) written += batch;
      if (next >= total && !faultDue()) {
        finish('complete');
        // Whole at its first write: ended with the turn's other answers, as any answer.
        return void (opening ? endSoon(res, batch) : res.end(batch));
      }
      if (opening) flushWrites(); // a pipelined answer queued before this one goes out first
      if (!res.write(batch)) {
        blockedSince = performance.now();
        return void res.once('drain', onDrain);
      }
    }
    // The head goes with the first events; alone when none is due yet (a stall or a gap right away).
    if (batch === '' && !flushed) {
      flushWrites(); // a pipelined answer queued before this one goes out first
      res.flushHeaders();
    }
    flushed = true;
    // A fault acts when the next event would have been due, in its place.
    if (batch === '' && applyFault()) return;
    if (next >= total && !faultDue()) {
      finish('complete');
      return void res.end();
    }
    schedule();
  }

  /** Whether the fault acts before the next event. */
  function faultDue(): boolean {
    return fault !== undefined && next === fault.after && !(stalled && fault.fault.kind === 'stall');
  }

  function schedule(): void {
    if (done) return;
    const wait = next < total ? (waits[next] ?? 0) : 0;
    // More due now after a full write: the next write waits for the loop's next turn (other
    // requests go on meanwhile, and no stack builds up over a long `gap: 0` stream).
    if (wait <= 0) return void (soon = setImmediate(step));
    timer = setTimeout(step, wait);
  }

  const first = waits[0] ?? 0;
  if (first <= 0) step();
  else timer = setTimeout(step, first);
  // Listened to only by a stream still going after this turn ('close' never comes within it): a
  // `gap: 0` stream has ended already.
  if (!done) {
    listening = true;
    res.once('close', onClose);
  }
}

function events(n: number): string {
  return n === 1 ? '1 event' : `${n} events`;
}
