import { JOURNAL_BODY_LIMIT, bodyValue, drainBody, hasBody, type BodyOutcome } from '../request-body.js';
import type { Exchange } from '../exchange.js';
import type { Reply } from '../reply.js';
import { bodyNeedOf, type BodyNeed, type Next, type Step } from '../steps.js';

export interface BodyStepParts {
  reply: Reply;
}

/**
 * The body step: reads a request's body, if it has one, before any later step runs — all of it when
 * a later step wants it whole (it says so in `wantsWholeBody`), else its first 64 KiB for the
 * journal — and refuses one over `server.maxBodySize` (413, journal step `bad_request`). A request
 * without a body — most mock traffic — goes straight on, synchronously.
 */
export function bodyStep(p: BodyStepParts): Step {
  const { reply } = p;
  let later: readonly Step[] = [];

  /** The rest once the body is read (in a stream event, so under `reply.guarded`). */
  function afterBody(
    x: Exchange,
    next: Next,
    need: BodyNeed,
    outcome: BodyOutcome,
    kept: Buffer | undefined,
    truncated: boolean,
  ): void {
    if (need !== 'journal' && outcome === 'ok') x.wholeBody = kept;
    if (need === 'value' && outcome === 'ok' && kept !== undefined)
      x.body = bodyValue(kept, x.req.headers['content-type'], (note) => (x.notes ??= []).push(note));
    if (kept !== undefined && kept.length > JOURNAL_BODY_LIMIT) {
      // A copy: a view would keep the whole body alive for as long as the entry.
      x.journalBody = Buffer.from(kept.subarray(0, JOURNAL_BODY_LIMIT));
      x.bodyTruncated = true;
    } else {
      x.journalBody = kept;
      x.bodyTruncated = truncated;
    }
    if (x.res.destroyed) return;
    // Answered now, but ended (and, with Connection: close, the connection closed) only once the
    // rest of the body has been read and discarded: closing under a client still sending made it
    // fail with EPIPE before it could read the 413. requestTimeout bounds the wait.
    if (outcome === 'too_large') return reply.refuse(x, 'payloadTooLarge');
    if (outcome === 'aborted') return;
    next(x);
  }

  return {
    name: 'body',
    link(steps) {
      later = steps;
    },
    run(x, next) {
      if (!hasBody(x.req)) return next(x);
      const need = bodyNeedOf(later, x);
      const keep =
        need !== 'journal' ? x.compiled.config.server.maxBodySize : x.scope.journal.enabled ? JOURNAL_BODY_LIMIT : 0; // the session's journal keeps the first 64 KiB
      drainBody(x.req, x.compiled.config.server.maxBodySize, keep, (outcome, kept, truncated) =>
        reply.guarded(x, afterBody, next, need, outcome, kept, truncated),
      );
    },
  };
}
