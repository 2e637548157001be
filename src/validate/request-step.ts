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

/**
 * The "validate" step, after match and before delay and fail rate: a request to an endpoint that
 * validates requests (`openapi:`) is checked against the description; `report` adds the violations
 * header, `enforce` answers 400/422 (journal step `validation`).
 */
export function validateStep(p: ValidateStepParts): Step {
  const { reply } = p;

  /** True when it answered (`enforce`, and the request broke the description). */
  function refused(x: Exchange, validation: EndpointValidation): boolean {
    let violations;
    try {
      violations = validation.check({ mockPath: x.mockPath, url: x.req.url ?? '/', headers: x.req.headers, body: x.wholeBody, parsed: x.body });
    } catch (err) {
      // A schema of the description ajv cannot compile: the description's fault, not the client's.
      (x.notes ??= []).push(`not validated: ${(err as Error).message}`);
      return false;
    }
    x.violations = violations;
    p.violations?.add(x.endpoint?.key ?? x.mockPath, violations.length);
    if (violations.length === 0) return false;
    if (validation.mode === 'report') {
      x.extra = withViolationsHeader(x.extra, violations.length);
      return false;
    }
    const answer = validation.answer(violations, { url: x.req.url ?? '/', headers: x.req.headers, body: x.body, now: x.scope.clock() });
    reply.send(x, 'validation', answer.status, [...answer.headers, ...reply.limits(x), ...x.extra], answer.body, `${violations.length} violation${violations.length === 1 ? '' : 's'} of the OpenAPI description`);
    return true;
  }

  return {
    name: 'validate',
    run(x, next) {
      const validation = x.endpoint?.validation;
      if (validation !== undefined && refused(x, validation)) return;
      next(x);
    },
    wantsWholeBody: (_x, target) => (target?.validation !== undefined ? 'value' : 'journal'),
  };
}
