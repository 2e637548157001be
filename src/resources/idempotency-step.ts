import { bodyBytes } from '../answer/answer-body.js';
import type { Exchange } from '../http/exchange.js';
import type { Reply } from '../http/reply.js';
import type { Step } from '../http/steps.js';
import { DEFAULT_KEY_NAME } from '../config/types.js';
import {
  decideIdempotency,
  idempotencyKeyOf,
  replayOf,
  saveAnswer,
  type IdempotencyDecision,
  type KeyClaim,
} from './idempotency.js';
import type { Resources } from './index.js';
import { resourceWork, scopeOfRequest, storeDown } from './step.js';
import { STYLES, type Style } from './styles.js';

export interface IdempotencyStepParts {
  reply: Reply;
  /** Their store keeps the keys. None: no step. */
  resources?: Resources;
}

/** The style a request's refusal takes: its collection's, else the config's first collection's, else Stripe's. */
function styleOf(resources: Resources, x: Exchange): Style {
  return (
    resources.engine.match(x.method, x.mockPath)?.resource.style ??
    resources.engine.collections[0]?.style ??
    STYLES.stripe
  );
}

/**
 * Keeps the claim's answer: the first one the reply writes after this step, unless it must not be
 * kept (a validation 400 — the OpenAPI step's, or a resource's body it cannot read —, a streamed
 * answer) — then, as when the client goes away unanswered, the
 * key is let go and a retry runs again.
 */
function keepAnswer(x: Exchange, claim: KeyClaim, reply: Reply): void {
  let settled = false;
  const settle = (keep: Parameters<KeyClaim['save']>[0] | undefined): void => {
    if (settled) return;
    settled = true;
    x.onAnswer = undefined;
    const done = keep === undefined ? claim.release() : claim.save(keep);
    if (done instanceof Promise) done.catch((err: unknown) => reply.failed(x, err));
  };
  x.onAnswer = (answer) => {
    if (
      answer.streamed ||
      answer.step === 'validation' ||
      x.invalidRequest === true ||
      answer.status === 401 ||
      answer.status === 429
    )
      return settle(undefined);
    settle(saveAnswer(answer.status, answer.headers, bodyBytes(answer.body)));
  };
  // Gone unanswered: the key is free again — once the resource step, if it is writing, has answered.
  x.res.once('close', () => {
    const work = resourceWork.get(x);
    if (work === undefined) settle(undefined);
    else void work.finally(() => settle(undefined));
  });
}

/**
 * The "idempotency" step, after the limits: a POST with the key header (`idempotency.header`) is
 * answered once per key — the key seen before with the same body gets the first answer again byte
 * for byte with `Idempotent-Replayed: true`; with another body a 400, and while the first is still
 * being answered a 409, in the style's shape. Every answer after the limits is kept (simulated 500s
 * and answers a fault cut included: the retry then gets what was made); not 401, 429 or a
 * validation 400. It still counts towards the rate window and the month: the limits ran first.
 */
export function idempotencyStep(p: IdempotencyStepParts): Step | undefined {
  const { reply, resources } = p;
  if (resources === undefined) return undefined;

  function decided(x: Exchange, next: (x: Exchange) => void, decision: IdempotencyDecision): void {
    if (x.res.destroyed && decision.kind === 'claimed') return void decision.claim.release();
    switch (decision.kind) {
      case 'none':
        return next(x);
      case 'claimed':
        keepAnswer(x, decision.claim, reply);
        return next(x);
      case 'replay': {
        const replay = replayOf(decision.answer);
        x.answer = 'idempotent replay';
        return reply.send(
          x,
          'response',
          replay.status,
          replay.headers,
          replay.body,
          "idempotent replay: the answer to the key's first request",
        );
      }
      case 'refuse':
        return reply.send(
          x,
          'response',
          decision.answer.status,
          [
            'content-type',
            'application/json; charset=utf-8',
            'content-length',
            String(Buffer.byteLength(decision.answer.body)),
            ...reply.limits(x),
            ...x.extra,
          ],
          decision.answer.body,
          decision.note,
        );
    }
  }

  return {
    name: 'idempotency',
    run(x, next) {
      const config = x.compiled.config.idempotency;
      if (config === undefined || x.method !== 'POST') return next(x);
      const decision = decideIdempotency(
        resources.store,
        x.scope.clock,
        config,
        {
          method: x.method,
          path: x.mockPath,
          headers: x.req.headers,
          body: x.wholeBody,
          keyName: x.named?.name ?? DEFAULT_KEY_NAME,
          scope: scopeOfRequest(x),
        },
        styleOf(resources, x),
      );
      if (decision instanceof Promise)
        return void decision.then(
          (d) => decided(x, next, d),
          (err: unknown) => storeDown(reply, x, err),
        );
      decided(x, next, decision);
    },
    wantsWholeBody: (x) =>
      idempotencyKeyOf(x.compiled.config.idempotency, x.method, x.req.headers) === undefined ? 'journal' : 'whole',
  };
}
