import type { CompiledEndpoint } from '../../answer/compile.js';
import type { CompiledLeaf } from '../../answer/leaf.js';
import type { ResourceView } from '../../expression/context.js';
import type { FailureSource } from '../../pipeline/failure.js';
import { decideResilience, type ResilienceSource } from '../../pipeline/resilience.js';
import { answerDynamic, type AnswerWebhooks, type DynamicParts, type StreamAnswers } from '../dynamic-answer.js';
import type { Exchange } from '../exchange.js';
import type { Reply } from '../reply.js';
import type { Step } from '../steps.js';

export interface AnswerStepParts {
  reply: Reply;
  /** Read on every request: a reload that changes the seed swaps it. */
  readonly failures: FailureSource;
  /** Fault and latency-shape streams, kept across reloads (shared with the stream faults of src/stream/answer.ts). */
  resilience: ResilienceSource;
  /** Streamed answers (src/stream/answer.ts); a `stream:` answer needs them. */
  streams?: StreamAnswers;
  /** Webhooks (src/webhooks): what an answer's `send` fires once the answer is sent. */
  webhooks?: AnswerWebhooks;
  /** What `resources.<name>` reads in an answer (src/resources), when the server has resources. */
  resourceView?: (x: Exchange) => ResourceView | undefined;
  /**
   * `serve --workers` without a fleet: tells every other worker the scenario states an answer's
   * `setState` moved; resolves once all of them applied them (the answer waits for it).
   */
  shareStates?: (moves: ReadonlyArray<readonly [string, string]>) => Promise<void>;
}

/**
 * The answer step, the last: the endpoint's delay (its own, a latency shape's), its network fault,
 * the simulated failure of its fail rate (500, journal step `failure`), then its answer (`response`),
 * fixed or made for the request (dynamic-answer.ts). Faults, failures and delays are decided on
 * arrival, so "the n-th request" is the n-th to arrive whatever the delays.
 */
export function answerStep(p: AnswerStepParts): Step {
  const { reply } = p;
  const { resilience } = p;

  /** Resilience: sets the request's fault, returns the delay its latency shape drew (on arrival, like the fail rate). */
  function decideFaultAndDelay(x: Exchange, endpoint: CompiledEndpoint, leaf?: CompiledLeaf): number {
    const decision = decideResilience(resilience, p.failures.seed, endpoint.key, endpoint.resilience!, leaf);
    if (decision.fault !== undefined) x.fault = decision.fault;
    if (endpoint.resilience!.delayShape !== undefined) (x.notes ??= []).push(`delay: ${decision.shapedDelayMs} ms`);
    return decision.shapedDelayMs;
  }

  const dynamicParts: DynamicParts = {
    reply,
    get failures() {
      return p.failures;
    },
    ...(p.streams === undefined ? {} : { streams: p.streams }),
    ...(p.webhooks === undefined ? {} : { webhooks: p.webhooks }),
    ...(p.resourceView === undefined ? {} : { resourceView: p.resourceView }),
    ...(p.shareStates === undefined ? {} : { shareStates: p.shareStates }),
    decideFaultAndDelay,
  };

  function finish(x: Exchange, endpoint: CompiledEndpoint, fail: boolean): void {
    if (x.res.destroyed) return;
    if (fail) return reply.refuse(x, 'simulatedFailure');
    x.answer = endpoint.answerLabel;
    reply.send(x, 'response', endpoint.status, reply.filledHeaders(x, endpoint.headers, endpoint), endpoint.body);
  }

  return {
    name: 'answer',
    run(x) {
      const endpoint = x.endpoint!;
      if (endpoint.dynamic !== undefined) return answerDynamic(x, endpoint, endpoint.dynamic, dynamicParts);
      // Decided on arrival, so "the n-th request" is the n-th to arrive whatever the delays.
      const fail = p.failures.shouldFail(endpoint.key, endpoint.failRate);
      const delayMs =
        endpoint.resilience === undefined ? endpoint.delayMs : endpoint.delayMs + decideFaultAndDelay(x, endpoint);
      if (delayMs <= 0) return finish(x, endpoint, fail);
      const timer = setTimeout(reply.guarded<[CompiledEndpoint, boolean]>, delayMs, x, finish, endpoint, fail);
      x.res.once('close', () => clearTimeout(timer));
    },
    wantsWholeBody: (_x, target) => (target?.dynamic?.readsBody === true ? 'value' : 'journal'),
  };
}
