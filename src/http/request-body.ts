import type { IncomingMessage } from 'node:http';
import { isFormType, parseFormBody } from './form-body.js';

/** Bodies are kept for the journal up to this many bytes; the rest is counted as `bodyTruncated`. */
export const JOURNAL_BODY_LIMIT = 64 * 1024;

export type BodyOutcome = 'ok' | 'too_large' | 'aborted';

/** Whether the request announces a body (a non-zero Content-Length, or Transfer-Encoding). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Reads the request body, enforcing `limit` bytes (413 over the limit), and keeps its
 * first `keep` bytes (the request journal's copy; 0 keeps nothing). `done` gets what was
 * kept (undefined when nothing) and whether the body was longer. Requests without a body — most
 * mock traffic — call back synchronously, so the hot path pays nothing.
 */
export function drainBody(
  req: IncomingMessage,
  limit: number,
  keep: number,
  done: (outcome: BodyOutcome, kept: Buffer | undefined, truncated: boolean) => void,
): void {
  if (!hasBody(req)) return done('ok', undefined, false);
  const length = req.headers['content-length'];
  if (length !== undefined && Number(length) > limit) return done('too_large', undefined, false);

  let received = 0;
  let settled = false;
  const chunks: Buffer[] = [];
  let kept = 0;
  const settle = (outcome: BodyOutcome) => {
    if (settled) return;
    settled = true;
    req.removeListener('data', onData);
    if (outcome !== 'ok') req.resume(); // let the socket drain without buffering what follows
    done(outcome, chunks.length === 0 ? undefined : Buffer.concat(chunks), received > kept);
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (kept < keep) {
      // A copy of the part kept: a slice would pin the whole chunk (up to 64 KiB) for each entry.
      const part = chunk.length <= keep - kept ? chunk : Buffer.from(chunk.subarray(0, keep - kept));
      chunks.push(part);
      kept += part.length;
    }
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
 * Deepest a JSON request body may nest (`[` and `{` inside one another) and still be read as JSON.
 * Answers walk the parsed body recursively (`json(body)`, `${body}`, `contains`, `matches`,
 * `seedBy`); a body nested deeper would overflow the stack there, so it is read as text instead.
 */
export const MAX_BODY_DEPTH = 128;

/**
 * Whether JSON text nests at most `limit` levels of `[`/`{`; brackets inside strings do not count.
 * One pass over the bytes, stopping early once too deep (UTF-8 continuation bytes are never ASCII,
 * so comparing bytes is safe). For text that is not JSON the answer does not matter: it is not parsed.
 */
export function nestsWithin(bytes: Uint8Array, limit: number): boolean {
  if (bytes.length <= limit) return true;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === 0x5c)
        i++; // `\`: the next byte is escaped, even a quote
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x7b || b === 0x5b) {
      if (++depth > limit) return false;
    } else if (b === 0x7d || b === 0x5d) depth--;
  }
  return true;
}

/** A note for the journal and the log when a JSON body is read as text for its depth. */
export const TOO_DEEP_NOTE = `JSON body nested deeper than ${MAX_BODY_DEPTH} levels: read as text`;

/**
 * The body as an answer reads it (`body`): parsed when the content type is JSON
 * (`application/json`, `…+json`), it parses and it nests at most {@link MAX_BODY_DEPTH} levels,
 * the fields of a form (`application/x-www-form-urlencoded`, `a[b]=1` read as `{a: {b: '1'}}`),
 * else the text; undefined when empty. Used only for endpoints whose answers read `body` (their
 * whole body is kept by {@link drainBody}). `note` hears why a JSON body is read as text, when it
 * is for its depth.
 */
export function bodyValue(bytes: Buffer, contentType: string | undefined, note?: (text: string) => void): unknown {
  if (bytes.length === 0) return undefined;
  const text = bytes.toString('utf8');
  // The usual value first: no pattern to run for it.
  if (
    contentType !== undefined &&
    (contentType === 'application/json' || /^[^;]*[/+]json\s*(;|$)/i.test(contentType))
  ) {
    if (!nestsWithin(bytes, MAX_BODY_DEPTH)) {
      note?.(TOO_DEEP_NOTE);
      return text;
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      // not JSON after all: the text, as for any other type
    }
  }
  // A form body reads as its fields, bracket notation as nesting: `body.metadata.order_id`.
  if (isFormType(contentType)) return parseFormBody(text);
  return text;
}
