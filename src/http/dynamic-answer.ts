import type { DynamicAnswers } from '../answer/answer-tree.js';
import type { CompiledEndpoint } from '../answer/compile.js';
import type { AnswerBody } from '../answer/answer-body.js';
import type { CompiledLeaf, RenderedAnswer } from '../answer/leaf.js';
import { LazyRequestContext } from '../answer/request-context.js';
import { internalErrorBody } from '../answer/responses.js';
import type { LimitVerdict } from '../pipeline/limits.js';
import type { AnswerHeaders } from './answer-headers.js';
import type { Exchange } from './exchange.js';
import type { HandlerDeps } from './handler.js';
import type { Step } from '../control/journal-entry.js';
import type { PreparedSend } from '../webhooks/prepare.js';
import { createAnswerRandom } from '../answer/random.js';
import { placeFault, type RenderedStream, type StreamFaultPlan } from '../stream/compile.js';
import type { StreamFaultConfig } from '../stream/model.js';

/** One request to an endpoint with dynamic answers. */
export interface DynamicRequest {
  readonly x: Exchange;
  readonly endpoint: CompiledEndpoint;
  readonly dynamic: DynamicAnswers;
  readonly verdict: LimitVerdict;
  /** The request path after `/mock`. */
  readonly mockPath: string;
}

/** What the handler lends: its dependencies and its writers (`send` stays the only writer). */
export interface DynamicWriters extends Pick<AnswerHeaders, 'limitsOf' | 'answerHeaders'> {
  readonly deps: HandlerDeps;
  send(x: Exchange, step: Step, status: number, headers: readonly string[], body: AnswerBody, note?: string): void;
  /** Writes a streamed answer over time (journaled when it ends). */
  sendStream(x: Exchange, status: number, headers: readonly string[], rendered: RenderedStream, fault: StreamFaultPlan | undefined, sends?: readonly PreparedSend[]): void;
  /** The stream fault of the next request through this leaf's stream faults (seeded per endpoint and answer). */
  streamFault(endpoint: CompiledEndpoint, label: string, faults: readonly StreamFaultConfig[]): StreamFaultConfig | undefined;
  respondJson(x: Exchange, step: Step, status: number, body: AnswerBody, limitList?: readonly string[], note?: string): void;
  notFound(x: Exchange, mockPath: string, verdict: LimitVerdict, note: string | undefined): void;
  /** Runs `step` from a timer: what it throws becomes the 500 `internal_error`, never an uncaught exception. */
  guarded<A extends unknown[]>(x: Exchange, step: (x: Exchange, ...args: A) => void, ...args: A): void;
  /** The simulated 500, as `errors:` may reshape it. */
  simulatedFailure(x: Exchange, verdict: LimitVerdict): void;
  /** Resilience: decides the request's fault (set on `x`) and returns the delay its latency shape drew. */
  decideFaultAndDelay(x: Exchange, endpoint: CompiledEndpoint, leaf: CompiledLeaf): number;
}

/**
 * Dynamic answers at request time, the match-to-answer steps for an endpoint whose answer varies: count the request,
 * choose the answer (a `responses` list where no `when` holds is the match step's 404), decide the
 * simulated failure, and — only when the request is answered — render the answer, advance the
 * sequences it went through and apply its `setState`, all on arrival so that the n-th request to
 * arrive is the n-th whatever the delays. The delay is the endpoint's plus the answer's own.
 */
export function answerDynamic(request: DynamicRequest, writers: DynamicWriters): void {
  const { x, endpoint, dynamic, verdict, mockPath } = request;
  const { answers, failures, clock } = writers.deps;
  const ctx = new LazyRequestContext({
    url: x.req.url ?? '/',
    mockPath,
    headers: x.req.headers,
    body: x.body,
    request: answers.nextRequest(endpoint.key),
    state: answers.states,
    now: clock(),
    readParams: dynamic.readParams,
    seed: failures.seed,
    endpointKey: endpoint.key,
    seedBy: dynamic.seedBy,
  });
  const choice = dynamic.select(ctx, answers, failures.seed);
  if (choice === undefined) return writers.notFound(x, mockPath, verdict, dynamic.closest(ctx));
  const { leaf } = choice;
  const fail = failures.shouldFail(endpoint.key, endpoint.failRate);
  let rendered: RenderedAnswer | undefined;
  let sends: PreparedSend[] | undefined;
  let streamed: StreamAnswer | undefined;
  if (!fail) {
    rendered = leaf.fixed ?? leaf.render(ctx);
    if (leaf.stream !== undefined && rendered.problem === undefined) streamed = renderStream(leaf, endpoint, ctx, writers);
    // A stream over the answer caps is a 500 saying so, as a body over them is.
    const tooLarge = streamed?.rendered.problem;
    if (tooLarge !== undefined) [rendered, streamed] = [{ status: 500, headers: [], body: '', problem: tooLarge, problemMessage: tooLarge }, undefined];
    for (const id of choice.advances) answers.advance(endpoint.key, id);
    for (const [name, state] of leaf.setState) answers.setScenario(name, state);
    // Webhooks: evaluated with the request now, sent once the answer is (never on a failure or fault).
    if (leaf.send !== undefined && rendered.problem === undefined) sends = writers.deps.webhooks?.prepare(leaf.send, ctx, rendered, endpoint.key);
  }
  const delayMs = endpoint.delayMs + leaf.delayMs + (endpoint.resilience === undefined ? 0 : writers.decideFaultAndDelay(x, endpoint, leaf));
  // No closure on the common path (no delay): finish is called directly.
  if (delayMs <= 0) return finish(x, verdict, leaf, rendered, writers, streamed, sends);
  const timer = setTimeout(() => writers.guarded(x, finish, verdict, leaf, rendered, writers, streamed, sends), delayMs);
  x.res.once('close', () => clearTimeout(timer));
}

/** Writes the answer (or the simulated failure, or the 500 of an answer that could not be made). */
function finish(x: Exchange, verdict: LimitVerdict, leaf: CompiledLeaf, rendered: RenderedAnswer | undefined, writers: DynamicWriters, streamed?: StreamAnswer, sends?: PreparedSend[]): void {
  if (x.res.destroyed) return;
  if (rendered === undefined) return writers.simulatedFailure(x, verdict);
  if (rendered.problem !== undefined) return writers.respondJson(x, 'response', 500, internalErrorBody(rendered.problemMessage), writers.limitsOf(x, verdict), `${leaf.label}: ${rendered.problem}`);
  x.answer = leaf.label;
  if (streamed !== undefined) {
    const headers = writers.answerHeaders(x, rendered, false, verdict);
    // A network fault (reset, slow, truncate…) acts on the whole stream's bytes; else the stream is written over time.
    if (x.fault !== undefined) return writers.send(x, 'response', rendered.status, headers, streamed.rendered.text());
    // Its webhooks are sent once the stream has sent all its events (not when cut, reset or left).
    return writers.sendStream(x, rendered.status, headers, streamed.rendered, streamed.fault, sends);
  }
  // The journal entry names the deliveries this answer caused (its notes).
  if (sends !== undefined && x.fault === undefined) (x.notes ??= []).push(...(writers.deps.webhooks?.fire(sends) ?? []));
  writers.send(x, 'response', rendered.status, writers.answerHeaders(x, rendered, rendered === leaf.fixed, verdict), rendered.body);
}

/** One request's stream and its fault (at most one fault a request: none when a network fault was drawn). */
interface StreamAnswer {
  readonly rendered: RenderedStream;
  readonly fault: StreamFaultPlan | undefined;
}

/**
 * Renders the leaf's stream on arrival: its events, and the waits drawn from a seeded source of
 * their own (seed, endpoint, answer, request number), so with a seed the n-th stream of an endpoint
 * has the same events at the same offsets. The stream fault is drawn here too, like other faults.
 */
function renderStream(leaf: CompiledLeaf, endpoint: CompiledEndpoint, ctx: LazyRequestContext, writers: DynamicWriters): StreamAnswer {
  const plan = leaf.stream!;
  const timing = createAnswerRandom(writers.deps.failures.seed, `${endpoint.key}\u0000stream\u0000${leaf.label}`, ctx.request);
  const rendered = plan.render(ctx, timing);
  const fault = plan.faults === undefined ? undefined : writers.streamFault(endpoint, leaf.label, plan.faults);
  return { rendered, fault: fault === undefined ? undefined : placeFault(fault, rendered) };
}
