import { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { https } from '../lazy-builtins.js';
import { attemptDelivery, type Attempt, type AttemptResult } from './attempt.js';
import type { EventSource } from './held.js';
import { attemptHeaders, type ResolvedSign } from './sign.js';

/** One attempt to make: everything needed to write, sign and send it, and nothing to look up. */
export interface AttemptRequest {
  /** The dispatcher's number for this attempt: its outcome carries it back. */
  readonly id: number;
  readonly url: string;
  readonly sign: ResolvedSign;
  /** What the bytes are made of: the body and the event id are written from it where the attempt is sent (the same on every attempt). */
  readonly source: EventSource;
  /** Seconds since the epoch to sign with: the real clock when the attempt was due (already moved back for `staleTimestamp`). */
  readonly timestamp: number;
  readonly badSignature: boolean;
  readonly timeoutMs: number;
}

/** How an attempt went, and whether it was signed (then its headers follow from the request: the server's thread writes them when shown). */
export interface AttemptOutcome {
  readonly id: number;
  readonly signed: boolean;
  readonly result: AttemptResult;
}

/** Makes attempts and reports their outcomes in batches; `close` stops them all and lets go of every socket. */
export interface AttemptSender {
  send(batch: readonly AttemptRequest[]): void;
  close(): void;
}

/** Outcomes are reported at most this long after they come (or at once, 256 of them). */
const REPORT_EVERY_MS = 2;
const REPORT_BATCH = 256;

/**
 * Sends attempts from this thread over keep-alive connections, at most `maxSockets` at once (the
 * rest wait in order: an attempt's timeout counts from when it is sent), and reports outcomes
 * together: within 2 ms, or at once when 256 are waiting, so that the thread that records them
 * wakes once for many. Used inside the delivery thread, and in the server's own thread where that
 * thread cannot run.
 */
export function createLocalSender(maxSockets: number, report: (outcomes: AttemptOutcome[]) => void): AttemptSender {
  const httpAgent = new HttpAgent({ keepAlive: true, maxSockets });
  let httpsAgent: HttpsAgent | undefined; // made for the first https: target (node:https loads then)
  const urls = new Map<string, URL | null>(); // parsed once: targets are few (cleared if request-made URLs fill it)
  const inFlight = new Set<Attempt>();
  let queue: AttemptRequest[] = [];
  let head = 0;
  let done: AttemptOutcome[] = [];
  let flush: NodeJS.Timeout | undefined;
  let closed = false;

  const flushNow = (): void => {
    if (flush !== undefined) clearTimeout(flush);
    flush = undefined;
    const batch = done;
    done = [];
    if (!closed && batch.length > 0) report(batch);
  };
  const tell = (outcome: AttemptOutcome): void => {
    done.push(outcome);
    if (done.length >= REPORT_BATCH) flushNow();
    else flush ??= setTimeout(flushNow, REPORT_EVERY_MS);
  };

  function parse(text: string): URL | null {
    let url = urls.get(text);
    if (url !== undefined) return url;
    if (urls.size >= 256) urls.clear();
    try {
      url = new URL(text);
    } catch {
      url = null;
    }
    urls.set(text, url);
    return url;
  }

  function pump(): void {
    while (!closed && inFlight.size < maxSockets && head < queue.length) start(queue[head++] as AttemptRequest);
    if (head > 1024 && head * 2 > queue.length) {
      queue = queue.slice(head);
      head = 0;
    }
  }

  function start(request: AttemptRequest): void {
    const url = parse(request.url);
    if (url === null)
      return tell({
        id: request.id,
        signed: false,
        result: { error: `not a URL: ${JSON.stringify(request.url)}`, ms: 0 },
      });
    const { source } = request;
    const body = Buffer.from(source.body, 'utf8');
    const headers = attemptHeaders(
      request.sign,
      body,
      source.eventId,
      source.type,
      request.timestamp,
      request.badSignature,
    );
    const attempt = attemptDelivery(
      url,
      headers,
      body,
      request.timeoutMs,
      url.protocol === 'https:' ? (httpsAgent ??= new (https().Agent)({ keepAlive: true, maxSockets })) : httpAgent,
    );
    inFlight.add(attempt);
    void attempt.done.then((result) => {
      inFlight.delete(attempt);
      tell({ id: request.id, signed: true, result });
      pump();
    });
  }

  return {
    send(batch) {
      if (closed) return;
      for (const request of batch) queue.push(request);
      pump();
    },
    close() {
      closed = true;
      if (flush !== undefined) clearTimeout(flush);
      queue = [];
      for (const attempt of inFlight) attempt.abort();
      httpAgent.destroy();
      httpsAgent?.destroy();
    },
  };
}
