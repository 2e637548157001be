import type { Envelope } from '../config/types-webhooks.js';
import { EventSource } from './held.js';
import type { ResolvedSign } from './sign.js';
import type { AttemptOutcome, AttemptRequest } from './sender.js';

/**
 * The messages between the server's thread and the delivery thread. A message is copied on each
 * side (structured clone), and what a copy costs goes by how many values it holds, far more than by
 * their bytes: attempts as objects took ~8 µs each to copy, as a flat list of 9 values 1.5 µs, as
 * one text 0.8 µs (32 attempts a message). So each message is one text: per item a line of numbers
 * (among them the lengths of its texts), then the texts themselves, back to back. Lengths rather
 * than separators: a body or a header may hold any character. The server's thread pays for every
 * delivery twice (the attempt out, the outcome back), so this keeps its share small: an attempt
 * carries what its bytes are made of (the delivery thread writes the event id and the body), an
 * outcome no headers (the server's thread writes them from the attempt when a delivery is shown).
 */

const ENVELOPES: readonly Envelope[] = ['stripe', 'standard', 'github', 'none'];

/** Attempts: the signing configs they use (each once), then the text of the attempts (see {@link encodeRequests}). */
export type RequestMessage = [signs: ResolvedSign[], text: string];
/** Outcomes, as one text (see {@link encodeOutcomes}). */
export type OutcomeMessage = string;

/**
 * Attempts as one message. Per attempt: `id sign timestamp badSignature timeoutMs created lane lane
 * n envelope` (the last four: the event id's place on its stream and the envelope's number) and the
 * lengths of url, type and data, space-separated, a newline, then those three texts.
 */
export function encodeRequests(batch: readonly AttemptRequest[]): RequestMessage {
  const signs: ResolvedSign[] = [];
  let text = '';
  for (const r of batch) {
    let sign = signs.indexOf(r.sign);
    if (sign < 0) sign = signs.push(r.sign) - 1;
    const { source } = r;
    const { lanes, n } = source.idPlace;
    text += `${r.id} ${sign} ${r.timestamp} ${r.badSignature ? 1 : 0} ${r.timeoutMs} ${source.created} ${lanes[0]} ${lanes[1]} ${n} ${ENVELOPES.indexOf(source.envelope)} ${r.url.length} ${source.type.length} ${source.dataText.length}\n${r.url}${source.type}${source.dataText}`;
  }
  return [signs, text];
}

/**
 * Reads an item's line of numbers, from `at` to its newline, digit by digit (no substrings, no
 * arrays: the server's thread reads every outcome); returns where the item's texts start.
 */
class LineReader {
  readonly values: number[] = [];
  constructor(private readonly text: string) {}

  read(at: number): number {
    const { text, values } = this;
    values.length = 0;
    let start = at;
    let value = 0;
    let negative = false;
    let plain = true; // digits and a leading '-' only (else: a fraction or an exponent, read by Number)
    for (let i = at; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 48 && c <= 57) value = value * 10 + (c - 48);
      else if (c === 45 && i === start) negative = true;
      else if (c !== 32 && c !== 10) plain = false;
      else {
        values.push(plain ? (negative ? -value : value) : Number(text.slice(start, i)));
        value = 0;
        negative = false;
        plain = true;
        start = i + 1;
        if (c === 10) return i + 1;
      }
    }
    throw new Error('a delivery-thread message ends inside an item');
  }
}

/** The attempts of a {@link RequestMessage}, as {@link encodeRequests} was given them (each with an event source of its own). */
export function decodeRequests([signs, text]: RequestMessage): AttemptRequest[] {
  const batch: AttemptRequest[] = [];
  const line = new LineReader(text);
  let at = 0;
  while (at < text.length) {
    const next = line.read(at);
    const [id, sign, timestamp, bad, timeoutMs, created, lane0, lane1, n, envelope, urlLength, typeLength, dataLength] = line.values as [number, number, number, number, number, number, number, number, number, number, number, number, number];
    const type = next + urlLength;
    const data = type + typeLength;
    at = data + dataLength;
    batch.push({
      id,
      url: text.slice(next, type),
      sign: signs[sign] as ResolvedSign,
      source: new EventSource(ENVELOPES[envelope] as Envelope, text.slice(type, data), created, text.slice(data, at), { lanes: [lane0, lane1], n }),
      timestamp,
      badSignature: bad === 1,
      timeoutMs,
    });
  }
  return batch;
}

/**
 * Outcomes as one message. Per outcome: `id signed status ms retryAfterMs errorLength` (status and
 * Retry-After -1 when none, the error's length -1 when none), space-separated, a newline, then the error.
 */
export function encodeOutcomes(outcomes: readonly AttemptOutcome[]): OutcomeMessage {
  let text = '';
  for (const { id, signed, result } of outcomes) {
    text += `${id} ${signed ? 1 : 0} ${result.status ?? -1} ${result.ms} ${result.retryAfterMs ?? -1} ${result.error === undefined ? -1 : result.error.length}\n${result.error ?? ''}`;
  }
  return text;
}

/** The outcomes of an {@link OutcomeMessage}: the same fields. */
export function decodeOutcomes(text: OutcomeMessage): AttemptOutcome[] {
  const outcomes: AttemptOutcome[] = [];
  const line = new LineReader(text);
  const values = line.values;
  let at = 0;
  while (at < text.length) {
    at = line.read(at);
    const [id, signed, status, ms, retryAfterMs, errorLength] = values as [number, number, number, number, number, number];
    const result: { status?: number; error?: string; ms: number; retryAfterMs?: number } = { ms };
    if (status >= 0) result.status = status;
    if (errorLength >= 0) {
      result.error = text.slice(at, at + errorLength);
      at += errorLength;
    }
    if (retryAfterMs >= 0) result.retryAfterMs = retryAfterMs;
    outcomes.push({ id, signed: signed === 1, result });
  }
  return outcomes;
}
