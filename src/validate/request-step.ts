import type { Clock } from '../clock.js';
import type { LimitVerdict } from '../pipeline/limits.js';
import type { EndpointValidation } from '../validate/step.js';
import type { ViolationTally } from '../validate/tally.js';
import { withViolationsHeader } from '../validate/violations.js';
import type { AnswerHeaders } from './answer-headers.js';
import type { AnswerWriter } from './answer-writer.js';
import type { Exchange } from './exchange.js';

/** What the validate step borrows from the handler. */
export interface ValidateWriters extends Pick<AnswerWriter, 'send'>, Pick<AnswerHeaders, 'limitsOf'> {
  readonly clock: Clock;
  /** Counts requests validated against the OpenAPI description (the summary at stop). */
  readonly violations: ViolationTally | undefined;
}

/**
 * The "validate" step (src/validate), after match and before delay and fail rate: true when it
 * answered (`enforce`, and the request broke the description); `report` adds the violations header.
 */
export function validateRequest(x: Exchange, validation: EndpointValidation, mockPath: string, verdict: LimitVerdict, writers: ValidateWriters): boolean {
  let violations;
  try {
    violations = validation.check({ mockPath, url: x.req.url ?? '/', headers: x.req.headers, body: x.bodyBytes, parsed: x.body });
  } catch (err) {
    // A schema of the description ajv cannot compile: the description's fault, not the client's.
    (x.notes ??= []).push(`not validated: ${(err as Error).message}`);
    return false;
  }
  x.violations = violations;
  writers.violations?.add(x.endpoint?.key ?? mockPath, violations.length);
  if (violations.length === 0) return false;
  if (validation.mode === 'report') {
    x.extra = withViolationsHeader(x.extra, violations.length);
    return false;
  }
  const answer = validation.answer(violations, { url: x.req.url ?? '/', headers: x.req.headers, body: x.body, now: writers.clock() });
  writers.send(x, 'validation', answer.status, [...answer.headers, ...writers.limitsOf(x, verdict), ...x.extra], answer.body, `${violations.length} violation${violations.length === 1 ? '' : 's'} of the OpenAPI description`);
  return true;
}
