import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { attemptDelivery, type Attempt, type AttemptResult } from './attempt.js';
import { signatureHeaders, type ResolvedSign } from './sign.js';

/** One attempt to make: everything needed to sign it and send it, and nothing to look up. */
export interface AttemptRequest {
  /** The dispatcher's number for this attempt: its outcome carries it back. */
  readonly id: number;
  readonly url: string;
  readonly sign: ResolvedSign;
  /** The bytes to send, as text (the same on every attempt). */
  readonly body: string;
  readonly eventId: string;
  readonly type: string;
  /** Seconds since the epoch to sign with: the real clock when the attempt was due (already moved back for `staleTimestamp`). */
  readonly timestamp: number;
  readonly badSignature: boolean;
  readonly timeoutMs: number;
}

/** How an attempt went, and the headers it was sent with (signatures; never a secret). */
export interface AttemptOutcome {
  readonly id: number;
  readonly headers: Record<string, string>;
  readonly result: AttemptResult;
}

/** Makes attempts and reports their outcomes in batches; `close` stops them all and lets go of every socket. */
export interface AttemptSender {
  send(batch: readonly AttemptRequest[]): void;
  close(): void;
}

/** The headers one attempt is sent with: the body's type, who sends it, and its signature. */
export function attemptHeaders(request: AttemptRequest, bodyBytes: Buffer): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'mockapi-webhooks',
    ...signatureHeaders(request.sign, { body: bodyBytes, id: request.eventId, type: request.type, timestamp: request.timestamp, badSignature: request.badSignature }),
  };
}

/**
 * Sends attempts from this thread over keep-alive connections (at most `maxSockets` per receiver),
 * and reports outcomes once per turn of the event loop, together: one call for all the attempts
 * that finished while the loop read its sockets. Used inside the delivery thread, and in the
 * server's own thread where that thread cannot run.
 */
export function createLocalSender(maxSockets: number, report: (outcomes: AttemptOutcome[]) => void): AttemptSender {
  const agents = { http: new HttpAgent({ keepAlive: true, maxSockets }), https: new HttpsAgent({ keepAlive: true, maxSockets }) };
  const urls = new Map<string, URL | null>(); // parsed once: targets are few (cleared if request-made URLs fill it)
  const inFlight = new Set<Attempt>();
  let done: AttemptOutcome[] = [];
  let flush: NodeJS.Immediate | undefined;
  let closed = false;

  const tell = (outcome: AttemptOutcome): void => {
    done.push(outcome);
    flush ??= setImmediate(() => {
      flush = undefined;
      const batch = done;
      done = [];
      if (!closed) report(batch);
    });
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

  function start(request: AttemptRequest): void {
    const url = parse(request.url);
    if (url === null) return tell({ id: request.id, headers: {}, result: { error: `not a URL: ${JSON.stringify(request.url)}`, ms: 0 } });
    const body = Buffer.from(request.body, 'utf8');
    const headers = attemptHeaders(request, body);
    const attempt = attemptDelivery(url, headers, body, request.timeoutMs, url.protocol === 'https:' ? agents.https : agents.http);
    inFlight.add(attempt);
    void attempt.done.then((result) => {
      inFlight.delete(attempt);
      tell({ id: request.id, headers, result });
    });
  }

  return {
    send(batch) {
      if (!closed) for (const request of batch) start(request);
    },
    close() {
      closed = true;
      if (flush !== undefined) clearImmediate(flush);
      for (const attempt of inFlight) attempt.abort();
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
