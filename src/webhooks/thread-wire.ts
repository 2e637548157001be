import type { Envelope } from '../config/types-webhooks.js';
import { EventSource } from './held.js';
import type { ResolvedSign } from './sign.js';
import type { AttemptOutcome, AttemptRequest } from './sender.js';

/**
 * The messages between the server's thread and the delivery thread. A message is copied on each
 * side (structured clone), and what a copy costs goes by how many values it holds and how many
 * strings must be made, far more than by its bytes: 32 attempts as objects took ~8 µs each to copy,
 * as a flat list 1.5 µs, as one text ~1 µs (the numbers written as text, the text flattened), as
 * numbers in a Float64Array with their texts in a table 0.35-0.45 µs. So a message is: the signing
 * configs, the numbers of every item in one Float64Array, and each distinct text once (the target's
 * URL, the event type and the data of a fixed template are the same for a whole batch), the numbers
 * naming texts by their place in that table. The server's thread pays for every delivery twice (the
 * attempt out, the outcome back), so this keeps its share small: an attempt carries what its bytes
 * are made of (the delivery thread writes the event id and the body), an outcome no headers (the
 * server's thread writes them from the attempt when a delivery is shown).
 */

/** Attempts: signing configs, {@link REQUEST_NUMBERS} numbers per attempt, and the texts they name. */
export type RequestMessage = [signs: ResolvedSign[], numbers: Float64Array, texts: string[]];
/** Outcomes: {@link OUTCOME_NUMBERS} numbers per outcome, and the error texts they name. */
export type OutcomeMessage = [numbers: Float64Array, texts: string[]];

const ENVELOPES: readonly Envelope[] = ['stripe', 'standard', 'github', 'none'];
/** id, sign, timestamp, badSignature, timeoutMs, created, lane, lane, n, envelope, url, type, data (the last three: places in the texts). */
const REQUEST_NUMBERS = 13;
/** id, signed, status (-1: none), ms, Retry-After ms (-1: none), error (its place in the texts, -1: none). */
const OUTCOME_NUMBERS = 6;

/** Each distinct text once: `place` gives a text's index, adding it the first time. */
function textTable(): { texts: string[]; place(text: string): number } {
  const texts: string[] = [];
  const places = new Map<string, number>();
  return {
    texts,
    place(text) {
      let at = places.get(text);
      if (at === undefined) places.set(text, (at = texts.push(text) - 1));
      return at;
    },
  };
}

/** Attempts as one message (see {@link RequestMessage}). */
export function encodeRequests(batch: readonly AttemptRequest[]): RequestMessage {
  const signs: ResolvedSign[] = [];
  const numbers = new Float64Array(batch.length * REQUEST_NUMBERS);
  const table = textTable();
  let k = 0;
  for (const r of batch) {
    let sign = signs.indexOf(r.sign);
    if (sign < 0) sign = signs.push(r.sign) - 1;
    const { source } = r;
    const { lanes, n } = source.idPlace;
    numbers[k++] = r.id;
    numbers[k++] = sign;
    numbers[k++] = r.timestamp;
    numbers[k++] = r.badSignature ? 1 : 0;
    numbers[k++] = r.timeoutMs;
    numbers[k++] = source.created;
    numbers[k++] = lanes[0];
    numbers[k++] = lanes[1];
    numbers[k++] = n;
    numbers[k++] = ENVELOPES.indexOf(source.envelope);
    numbers[k++] = table.place(r.url);
    numbers[k++] = table.place(source.type);
    numbers[k++] = table.place(source.dataText);
  }
  return [signs, numbers, table.texts];
}

/** The attempts of a {@link RequestMessage}, as {@link encodeRequests} was given them (each with an event source of its own). */
export function decodeRequests([signs, numbers, texts]: RequestMessage): AttemptRequest[] {
  const batch: AttemptRequest[] = [];
  for (let k = 0; k + REQUEST_NUMBERS <= numbers.length; k += REQUEST_NUMBERS) {
    const at = (i: number): number => numbers[k + i] as number;
    const text = (i: number): string => texts[at(i)] as string;
    batch.push({
      id: at(0),
      url: text(10),
      sign: signs[at(1)] as ResolvedSign,
      source: new EventSource(ENVELOPES[at(9)] as Envelope, text(11), at(5), text(12), {
        lanes: [at(6), at(7)],
        n: at(8),
      }),
      timestamp: at(2),
      badSignature: at(3) === 1,
      timeoutMs: at(4),
    });
  }
  return batch;
}

/** Outcomes as one message (see {@link OutcomeMessage}). */
export function encodeOutcomes(outcomes: readonly AttemptOutcome[]): OutcomeMessage {
  const numbers = new Float64Array(outcomes.length * OUTCOME_NUMBERS);
  const table = textTable();
  let k = 0;
  for (const { id, signed, result } of outcomes) {
    numbers[k++] = id;
    numbers[k++] = signed ? 1 : 0;
    numbers[k++] = result.status ?? -1;
    numbers[k++] = result.ms;
    numbers[k++] = result.retryAfterMs ?? -1;
    numbers[k++] = result.error === undefined ? -1 : table.place(result.error);
  }
  return [numbers, table.texts];
}

/** The outcomes of an {@link OutcomeMessage}: the same fields. */
export function decodeOutcomes([numbers, texts]: OutcomeMessage): AttemptOutcome[] {
  const outcomes: AttemptOutcome[] = [];
  for (let k = 0; k + OUTCOME_NUMBERS <= numbers.length; k += OUTCOME_NUMBERS) {
    const status = numbers[k + 2] as number;
    const retryAfterMs = numbers[k + 4] as number;
    const error = numbers[k + 5] as number;
    const result: { status?: number; error?: string; ms: number; retryAfterMs?: number } = {
      ms: numbers[k + 3] as number,
    };
    if (status >= 0) result.status = status;
    if (error >= 0) result.error = texts[error] as string;
    if (retryAfterMs >= 0) result.retryAfterMs = retryAfterMs;
    outcomes.push({ id: numbers[k] as number, signed: numbers[k + 1] === 1, result });
  }
  return outcomes;
}
