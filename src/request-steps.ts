import { answerStep, type AnswerStepParts } from './http/steps/answer.js';
import { authStep } from './http/steps/auth.js';
import { bodyStep, type BodyStepParts } from './http/steps/body.js';
import { limitsStep, type LimitsStepParts } from './http/steps/limits.js';
import { matchStep, notFoundStep } from './http/steps/match.js';
import type { Step } from './http/steps.js';
import { sessionStep, type SessionStepParts } from './sessions/index.js';
import { stubMatchStep, type StubMatchStepParts } from './stubs/step.js';
import { upstreamStep, type UpstreamStepParts } from './upstream/answer.js';
import { validateStep, type ValidateStepParts } from './validate/request-step.js';
import { resourceStep, type ResourceStepParts } from './resources/step.js';
import { idempotencyStep, type IdempotencyStepParts } from './resources/idempotency-step.js';

/** What the steps are built from: the composition root's parts (src/mock-server.ts), each step taking what it names. */
export interface StepParts
  extends
    BodyStepParts,
    LimitsStepParts,
    IdempotencyStepParts,
    StubMatchStepParts,
    ResourceStepParts,
    UpstreamStepParts,
    ValidateStepParts,
    AnswerStepParts,
    SessionStepParts {}

/**
 * The steps of a mock request, in order: each answers (journal step in brackets) or passes the
 * request on. A capability adds its step here, one line; one it was not given is left out. A step
 * that scopes the request and may rewrite `x.mockPath` (sessions) goes first, before the body is
 * read; see docs/internals/architecture.md, "Where a new capability goes".
 */
export function requestSteps(p: StepParts): Step[] {
  const steps = [
    sessionStep(p), //    400 a session id that is not one (bad_request); the request's session (x.scope), its /__session/<id> prefix off the path
    bodyStep(p), //       413 body too large (bad_request); the whole body when a step below wants it
    authStep(p), //       401 no key, invalid key (auth)
    limitsStep(p), //     429 rate limit, quota, 503 store down (rate_limit, quota); sets x.verdict
    idempotencyStep(p), // a POST's idempotency key: the first answer again, or 400/409 (response)
    stubMatchStep(p), //  a run-time stub answers before the config (sets x.endpoint)
    matchStep(), //       the config's endpoint (sets x.endpoint)
    resourceStep(p), //   no endpoint: a collection of resources: answers (response)
    upstreamStep(p), //   no endpoint: the real API answers (upstream)
    notFoundStep(p), //   404 "did you mean …" (match)
    validateStep(p), //   the violations header, or 400/422 (validation)
    answerStep(p), //     delay, fault, fail rate, then the answer (fault, failure, response)
  ];
  // A capability the server was not given has no step.
  return steps.filter((step) => step !== undefined);
}
