import type { Exchange } from '../http/exchange.js';
import type { Reply } from '../http/reply.js';
import type { Step } from '../http/steps.js';
import type { EndpointValidation } from './step.js';
import type { ViolationTally } from './tally.js';
import { withViolationsHeader } from './violations.js';

export interface ValidateStepParts {
  reply: Reply;
  /** Counts requests validated against the OpenAPI description (the summary at stop). */
  violations?: ViolationTally;
}

/** The journal's note for the parts of an operation a request was not checked against: `not validated: query parameter q (its schema …)`. */
function uncheckedNote(parts: readonly string[]): string {
  const named = [...new Set(parts)];
  return `not validated: ${named.join(', ')} (${named.length === 1 ? 'its schema' : 'their schemas'} in the description cannot be compiled; the rest of the request was checked)`;
}

/**
 * The "validate" step, after match and before delay and fail rate: a request to an endpoint that
 * validates requests (`openapi:`) is checked against the description; `report` adds the violations
 * header, `enforce` answers 400/422 (journal step `validation`). The first request that needs the
 * description after `serve` starts reads it, and it and any that come meanwhile wait for the read;
 * every later one, and every request to an endpoint without validation, goes through at once.
 */
export function validateStep(p: ValidateStepParts): Step {
  const { reply } = p;

  /** True when it answered (`enforce`, and the request broke the description). */
  function refused(x: Exchange, validation: EndpointValidation): boolean {
    const unchecked: string[] = [];
    const violations = validation.check(
      { mockPath: x.mockPath, url: x.req.url ?? '/', headers: x.req.headers, body: x.wholeBody, parsed: x.body },
      unchecked,
    );
    if (violations === undefined) {
      const why = validation.skipped?.();
      if (why !== undefined) (x.notes ??= []).push(why);
      return false;
    }
    // Parts of the operation whose schemas the description gets wrong (ajv cannot compile them): the rest was checked.
    if (unchecked.length > 0) (x.notes ??= []).push(uncheckedNote(unchecked));
    x.violations = violations;
    p.violations?.add(x.endpoint?.key ?? x.mockPath, violations.length);
    if (violations.length === 0) return false;
    if (validation.mode === 'report') {
      x.extra = withViolationsHeader(x.extra, violations.length);
      return false;
    }
    const answer = validation.answer(violations, {
      url: x.req.url ?? '/',
      headers: x.req.headers,
      body: x.body,
      now: x.scope.clock(),
    });
    reply.send(
      x,
      'validation',
      answer.status,
      [...answer.headers, ...reply.limits(x), ...x.extra],
      answer.body,
      `${violations.length} violation${violations.length === 1 ? '' : 's'} of the OpenAPI description`,
    );
    return true;
  }

  return {
    name: 'validate',
    run(x, next) {
      const validation = x.endpoint?.validation;
      if (validation === undefined) return next(x);
      const pending = validation.pending?.();
      if (pending === undefined) {
        if (!refused(x, validation)) next(x);
        return;
      }
      // The description is being read: this request is checked once it is.
      pending
        .then(() => reply.guarded(x, (y) => void (refused(y, validation) || next(y))))
        .catch((err: unknown) => reply.failed(x, err));
    },
    wantsWholeBody: (_x, target) =>
      target?.validation !== undefined && target.validation.checks?.() !== false ? 'value' : 'journal',
  };
}
