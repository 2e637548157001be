import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { IdempotencyConfig } from './model.js';
import type { MaybePromise, ResourceStore, SavedAnswer } from './store.js';
import type { Style, StyleAnswer } from './styles.js';

/**
 * Idempotency keys with Stripe's semantics. A POST that carries the key header is remembered by
 * the caller's key name, the method, the path and the key, for `ttl` on the server clock: the same
 * key again with the same body gets the first answer byte for byte (and nothing runs again); with
 * another body a 400; while the first is still being answered a 409 — each in the style's shape.
 * A key sent with another method is ignored.
 */

/** What a request carries, as the idempotency step reads it. */
export interface KeyedRequest {
  readonly method: string;
  /** The path after the base path. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer | undefined;
  /** The name of the caller's key (`default` for `apiKey`). */
  readonly keyName: string;
  readonly scope: string;
}

/** What the step does with a request. */
export type IdempotencyDecision =
  /** No key, not a POST, or idempotency off: nothing to do. */
  | { readonly kind: 'none' }
  /** A key seen first: answer as usual, then {@link KeyClaim.save} the answer (or {@link KeyClaim.release} it). */
  | { readonly kind: 'claimed'; readonly claim: KeyClaim }
  /** The key's answer: send it again. */
  | { readonly kind: 'replay'; readonly answer: SavedAnswer }
  /** Another body, or the first request still being answered: the style's 400 or 409. */
  | { readonly kind: 'refuse'; readonly answer: StyleAnswer; readonly note: string };

/** A key this request holds until its answer is saved or let go. */
export interface KeyClaim {
  save(answer: SavedAnswer): MaybePromise<void>;
  release(): MaybePromise<void>;
}

/** A request's key: its header's value, when the request is a POST that sends one. */
export function idempotencyKeyOf(
  config: IdempotencyConfig | undefined,
  method: string,
  headers: KeyedRequest['headers'],
): string | undefined {
  if (config === undefined || method !== 'POST') return undefined;
  const value = Object.hasOwn(headers, config.header) ? headers[config.header] : undefined;
  const key = Array.isArray(value) ? value[0] : value;
  return key === undefined || key === '' ? undefined : key;
}

/** The longest key kept (Stripe allows 255 characters). */
export const MAX_KEY_LENGTH = 255;

/** Decides what a request with a key gets; `style` shapes the refusals. */
export function decideIdempotency(
  store: ResourceStore,
  clock: Clock,
  config: IdempotencyConfig,
  req: KeyedRequest,
  style: Style,
): MaybePromise<IdempotencyDecision> {
  const key = idempotencyKeyOf(config, req.method, req.headers);
  if (key === undefined) return { kind: 'none' };
  if (key.length > MAX_KEY_LENGTH)
    return {
      kind: 'refuse',
      answer: style.invalid(`Idempotency keys can be at most ${MAX_KEY_LENGTH} characters long.`, null),
      note: 'idempotency key too long',
    };
  const name = `${req.keyName}\u0000${req.method}\u0000${req.path}\u0000${key}`;
  const fingerprint = createHash('sha256')
    .update(req.body ?? Buffer.alloc(0))
    .digest('base64');
  const now = clock();
  const decide = (held: Awaited<ReturnType<ResourceStore['claimKey']>>): IdempotencyDecision => {
    if (held === undefined) {
      return {
        kind: 'claimed',
        claim: {
          save: (answer) => store.completeKey(req.scope, name, fingerprint, answer, clock(), config.ttlMs),
          release: () => store.releaseKey(req.scope, name),
        },
      };
    }
    if (held.fingerprint !== fingerprint)
      return {
        kind: 'refuse',
        answer: style.idempotency('mismatch', key),
        note: 'idempotency key sent with another body',
      };
    if (held.state === 'pending')
      return {
        kind: 'refuse',
        answer: style.idempotency('in_flight', key),
        note: 'idempotency key in use by a request still being answered',
      };
    return { kind: 'replay', answer: held.answer };
  };
  const held = store.claimKey(req.scope, name, fingerprint, now, config.ttlMs);
  return held instanceof Promise ? held.then(decide) : decide(held);
}

/** The header every replayed answer carries. */
export const REPLAYED_HEADER = 'idempotent-replayed';

/** An answer to save: the header list and body as written. */
export function saveAnswer(status: number, headers: readonly string[], body: Buffer | string): SavedAnswer {
  return {
    status,
    headers: [...headers],
    body: (typeof body === 'string' ? Buffer.from(body, 'utf8') : body).toString('base64'),
  };
}

/** A saved answer as sent again: its headers with `Idempotent-Replayed: true`, and its bytes. */
export function replayOf(answer: SavedAnswer): { status: number; headers: string[]; body: Buffer } {
  return {
    status: answer.status,
    headers: [...answer.headers, REPLAYED_HEADER, 'true'],
    body: Buffer.from(answer.body, 'base64'),
  };
}
