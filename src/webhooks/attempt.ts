import { request as httpRequest, type Agent as HttpAgent, type ClientRequest } from 'node:http';
import { https } from '../lazy-builtins.js';
import { MAX_RECEIVER_RETRY_AFTER_MS, retryAfterDelay } from '../retry-after.js';

/** What one attempt came to: a status (any), or an error (refused, timeout, redirect…). */
export interface AttemptResult {
  readonly status?: number;
  readonly error?: string;
  /** Real milliseconds the attempt took. */
  readonly ms: number;
  /** A 429's or 503's `Retry-After`, in milliseconds. */
  readonly retryAfterMs?: number;
}

/** An attempt in flight: its result, and `abort` (the server stops). */
export interface Attempt {
  readonly done: Promise<AttemptResult>;
  abort(): void;
}

/** Most bytes of a receiver's answer read (the rest is dropped with the connection). */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * `Retry-After` as milliseconds: delay-seconds or an HTTP date (against `now`), at most
 * {@link MAX_RECEIVER_RETRY_AFTER_MS}: a receiver cannot push the next attempt past what a Date holds.
 */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  return retryAfterDelay(value, now, MAX_RECEIVER_RETRY_AFTER_MS);
}

/**
 * POSTs `body` to `url` once, on a connection of its own (no keep-alive, so nothing stays open
 * after it). A redirect is a failure (never followed), and so is an attempt that takes longer than
 * `timeoutMs`; the receiver's answer is read and dropped.
 */
export function attemptDelivery(
  url: URL,
  headers: Record<string, string>,
  body: Buffer,
  timeoutMs: number,
  agent?: HttpAgent,
): Attempt {
  const started = performance.now();
  let req: ClientRequest | undefined;
  let settle: (result: Omit<AttemptResult, 'ms'>) => void = () => {};
  const done = new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const timer = setTimeout(() => finish({ error: `timed out after ${timeoutMs} ms` }), timeoutMs);
    const finish = (result: Omit<AttemptResult, 'ms'>, keep = false): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!keep) req?.destroy(); // an answer read to its end leaves the connection to the agent
      resolve({ ...result, ms: Math.round(performance.now() - started) });
    };
    settle = finish;
    const send = url.protocol === 'https:' ? https().request : httpRequest;
    try {
      req = send(url, {
        method: 'POST',
        agent: agent ?? false,
        headers: {
          ...headers,
          'content-length': String(body.length),
          ...(agent === undefined ? { connection: 'close' } : {}),
        },
      });
    } catch (err) {
      return finish({ error: (err as Error).message });
    }
    req.on('error', (err: NodeJS.ErrnoException) => finish({ error: err.code ?? err.message }));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) res.destroy();
      });
      const end = (complete: boolean): void => {
        if (status >= 300 && status < 400)
          return finish(
            { status, error: `redirect to ${String(res.headers.location ?? '(no location)')}: not followed` },
            complete,
          );
        const after =
          status === 429 || status === 503 ? retryAfterMs(res.headers['retry-after'], Date.now()) : undefined;
        finish(after === undefined ? { status } : { status, retryAfterMs: after }, complete);
      };
      res.on('end', () => end(true));
      res.on('close', () => end(false));
      res.on('error', () => end(false));
    });
    req.end(body);
  });
  return { done, abort: () => settle({ error: 'the server stopped' }) };
}
