import type { AnswerState as RuntimeAnswerState } from '../answer/answer-state.js';
import type { CompiledEndpoint } from '../answer/compile.js';

/**
 * What the control plane needs of the answers' runtime state (sequence positions and
 * scenario states, kept outside the compiled config): the reset and scenario calls.
 */
export type AnswerState = Pick<RuntimeAnswerState, 'scenarios' | 'setScenario' | 'resetScenarios' | 'resetSequences'>;

/** The names (or positions) of an endpoint's answers, e.g. `["missing", "responses[1].sequence[0]", "found"]`. */
export function answerNames(endpoint: CompiledEndpoint): string[] {
  return endpoint.dynamic === undefined ? [endpoint.answerLabel] : [...endpoint.dynamic.labels];
}
