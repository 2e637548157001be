import type { ResolvedSign } from './sign.js';
import type { AttemptOutcome, AttemptRequest } from './sender.js';

/**
 * The messages between the server's thread and the delivery thread, as flat lists of strings and
 * numbers. A message is copied on each side (structured clone), and copying objects — each with
 * its own keys — costs several times what copying their values in one list does: an outcome as an
 * object with a `headers` object took ~8 µs to copy, as list items under 1 µs. The server's thread
 * pays for every delivery twice (the attempt out, the outcome back), so this keeps its share small.
 */

/** Attempts to make: the signing configs they use (each once), then 9 items per attempt. */
export type RequestMessage = [signs: ResolvedSign[], items: Array<string | number>];
/** Outcomes: per attempt its id, status (-1: none), ms, error ('' : none, else the text with a leading '!'), Retry-After ms (-1: none), header count, then header name/value pairs. */
export type OutcomeMessage = Array<string | number>;

const REQUEST_ITEMS = 9;

/** Attempts as one message (see {@link RequestMessage}). */
export function encodeRequests(batch: readonly AttemptRequest[]): RequestMessage {
  const signs: ResolvedSign[] = [];
  const items: Array<string | number> = [];
  for (const r of batch) {
    let sign = signs.indexOf(r.sign);
    if (sign < 0) sign = signs.push(r.sign) - 1;
    items.push(r.id, r.url, sign, r.body, r.eventId, r.type, r.timestamp, r.badSignature ? 1 : 0, r.timeoutMs);
  }
  return [signs, items];
}

/** The attempts of a {@link RequestMessage}, as {@link encodeRequests} was given them. */
export function decodeRequests([signs, items]: RequestMessage): AttemptRequest[] {
  const batch: AttemptRequest[] = [];
  for (let i = 0; i + REQUEST_ITEMS <= items.length; i += REQUEST_ITEMS) {
    batch.push({
      id: items[i] as number,
      url: items[i + 1] as string,
      sign: signs[items[i + 2] as number] as ResolvedSign,
      body: items[i + 3] as string,
      eventId: items[i + 4] as string,
      type: items[i + 5] as string,
      timestamp: items[i + 6] as number,
      badSignature: items[i + 7] === 1,
      timeoutMs: items[i + 8] as number,
    });
  }
  return batch;
}

/** Outcomes as one message (see {@link OutcomeMessage}). */
export function encodeOutcomes(outcomes: readonly AttemptOutcome[]): OutcomeMessage {
  const items: OutcomeMessage = [];
  for (const { id, headers, result } of outcomes) {
    const names = Object.keys(headers);
    items.push(id, result.status ?? -1, result.ms, result.error === undefined ? '' : `!${result.error}`, result.retryAfterMs ?? -1, names.length);
    for (const name of names) items.push(name, headers[name] as string);
  }
  return items;
}

/** The outcomes of an {@link OutcomeMessage}: the same fields, headers in the same order. */
export function decodeOutcomes(items: OutcomeMessage): AttemptOutcome[] {
  const outcomes: AttemptOutcome[] = [];
  let i = 0;
  while (i + 6 <= items.length) {
    const id = items[i] as number;
    const status = items[i + 1] as number;
    const ms = items[i + 2] as number;
    const error = items[i + 3] as string;
    const retryAfterMs = items[i + 4] as number;
    const count = items[i + 5] as number;
    i += 6;
    const headers: Record<string, string> = {};
    for (let h = 0; h < count; h++, i += 2) headers[items[i] as string] = items[i + 1] as string;
    const result: { status?: number; error?: string; ms: number; retryAfterMs?: number } = { ms };
    if (status >= 0) result.status = status;
    if (error !== '') result.error = error.slice(1);
    if (retryAfterMs >= 0) result.retryAfterMs = retryAfterMs;
    outcomes.push({ id, headers, result });
  }
  return outcomes;
}
