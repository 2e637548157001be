/**
 * What the control plane needs of the answers' runtime state (SPEC §7: sequence positions and
 * scenario states, which live outside the compiled config). Until dynamic answers land, every
 * endpoint has one plain `response:` and there are no scenarios; {@link staticAnswerState} says so.
 */
export interface AnswerState {
  /** Every scenario's current state, by name. */
  scenarios(): Record<string, string>;
  /** Moves scenario `name` to `state`; false when no such scenario is declared. */
  setScenario(name: string, state: string): boolean;
  /** Every scenario back to its `initial` state. */
  resetScenarios(): void;
  /** Every sequence back to its first step. */
  resetSequences(): void;
  /** The names (or positions) of an endpoint's answers, e.g. `["missing", "responses[1]", "found"]`. */
  answerNames(endpoint: string): string[];
}

/** The answer state of configs whose endpoints each have one plain `response:`. */
export const staticAnswerState: AnswerState = {
  scenarios: () => ({}),
  setScenario: () => false,
  resetScenarios() {},
  resetSequences() {},
  answerNames: () => ['response'],
};
