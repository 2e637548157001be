import type { IncomingMessage } from 'node:http';

export type BodyOutcome = 'ok' | 'too_large' | 'aborted';

/** Whether the request announces a body (a non-zero Content-Length, or Transfer-Encoding). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Reads and discards the request body, enforcing `limit` bytes (SPEC §3: 413 over the limit).
 * Requests without a body — most mock traffic — call back synchronously, so the hot path pays
 * nothing. The body is not kept: endpoints answer the same whatever was sent.
 */
export function drainBody(req: IncomingMessage, limit: number, done: (outcome: BodyOutcome) => void): void {
  if (!hasBody(req)) return done('ok');
  const length = req.headers['content-length'];
  if (length !== undefined && Number(length) > limit) return done('too_large');

  let received = 0;
  let settled = false;
  const settle = (outcome: BodyOutcome) => {
    if (settled) return;
    settled = true;
    req.removeListener('data', onData);
    if (outcome !== 'ok') req.resume(); // let the socket drain without buffering what follows
    done(outcome);
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > limit) settle('too_large');
  };
  req.on('data', onData);
  req.once('end', () => settle('ok'));
  req.once('error', () => settle('aborted'));
  req.once('close', () => {
    if (!req.complete) settle('aborted');
  });
}

/**
 * Like {@link drainBody}, but keeps the bytes (at most `limit`) and hands over the body as an
 * answer reads it (SPEC §7 `body`): parsed when the content type is JSON (`application/json`,
 * `…+json`) and it parses, else the text; undefined when empty. Used only for endpoints whose
 * answers read `body`; every other request's body is drained unread.
 */
export function readBody(req: IncomingMessage, limit: number, done: (outcome: BodyOutcome, body: unknown) => void): void {
  if (!hasBody(req)) return done('ok', undefined);
  const chunks: Buffer[] = [];
  const onData = (chunk: Buffer) => chunks.push(chunk);
  req.on('data', onData);
  drainBody(req, limit, (outcome) => {
    req.removeListener('data', onData);
    done(outcome, outcome === 'ok' ? bodyValue(Buffer.concat(chunks), req.headers['content-type']) : undefined);
  });
}

function bodyValue(bytes: Buffer, contentType: string | undefined): unknown {
  if (bytes.length === 0) return undefined;
  const text = bytes.toString('utf8');
  if (contentType !== undefined && /^[^;]*[/+]json\s*(;|$)/i.test(contentType)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      // not JSON after all: the text, as for any other type
    }
  }
  return text;
}
