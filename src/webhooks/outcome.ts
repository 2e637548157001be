import type { AttemptResult } from './attempt.js';

/** What follows an attempt: delivered, the target gone (410), another attempt after `waitMs`, or no more. */
export type Outcome =
  | { readonly kind: 'delivered' }
  | { readonly kind: 'gone' }
  | { readonly kind: 'retry'; readonly waitMs: number }
  | { readonly kind: 'give-up'; readonly error: string };

/**
 * The verdict on an attempt, the `attempts`-th of its delivery: a 2xx is delivered; 410 disables the
 * target; anything else (another status, a redirect, a timeout, a refused connection) is retried
 * after the schedule's next wait — or the receiver's `Retry-After` on a 429 or 503 — until the
 * schedule runs out.
 */
export function outcomeOf(result: AttemptResult, attempts: number, scheduleMs: readonly number[]): Outcome {
  const { status } = result;
  if (status !== undefined && status >= 200 && status < 300 && result.error === undefined) return { kind: 'delivered' };
  if (status === 410) return { kind: 'gone' };
  const wait = scheduleMs[attempts - 1];
  if (wait === undefined)
    return { kind: 'give-up', error: `gave up after ${attempts} attempt${attempts === 1 ? '' : 's'}` };
  return { kind: 'retry', waitMs: result.retryAfterMs ?? wait };
}
