import type { AnswerState } from '../answer/answer-state.js';
import type { DynamicAnswers } from '../answer/answer-tree.js';
import type { CompiledEndpoint } from '../answer/compile.js';
import type { CompiledLeaf, RenderedAnswer } from '../answer/leaf.js';
import { LazyRequestContext } from '../answer/request-context.js';
import type { ResourceView } from '../expression/context.js';
import { internalErrorBody } from '../answer/responses.js';
import type { FailureSource } from '../pipeline/failure.js';
import type { Exchange } from './exchange.js';
import { answerHeadersWin, type Reply } from './reply.js';

/** A leaf's stream rendered on arrival (src/stream/answer.ts); http only hands it back to {@link StreamAnswers.send}. */
export interface PreparedStream {
  /** The whole stream as one text: a network fault acts on all its bytes at once. */
  text(): string;
  /** Set when the stream is over the answer caps: said as a 500 before anything is written. */
  readonly problem?: string | undefined;
  /** Events the stream has. */
  readonly events: number;
  /** How many whole events the first `bytes` bytes of {@link text} hold. */
  eventsIn(bytes: number): number;
}

/** Streamed answers (`stream:`), lent by src/stream: the request path names no capability. */
export interface StreamAnswers {
  /** Renders the leaf's stream on arrival — its events, waits and stream fault — seeded per endpoint, answer and request number. */
  render(leaf: CompiledLeaf, endpoint: CompiledEndpoint, ctx: LazyRequestContext): PreparedStream;
  /** Writes the stream over time; journaled and logged when it ends. `complete` runs first when it sent all its events. */
  send(x: Exchange, status: number, headers: readonly string[], stream: PreparedStream, complete?: () => void): void;
}

/** Webhooks an answer sends (`send:`), lent by src/webhooks. */
export interface AnswerWebhooks {
  /** Evaluates the leaf's sends with the request, on arrival, for the request's session; what it makes is handed back to `fire`. */
  prepare(
    sends: NonNullable<CompiledLeaf['send']>,
    ctx: LazyRequestContext,
    rendered: RenderedAnswer,
    endpoint: string,
    session: string,
  ): unknown;
  /** Sends what `prepare` made, once the answer is sent; the journal notes naming the deliveries. */
  fire(prepared: unknown): string[];
}

/** What the dynamic answers of the answer step use, made once per server. */
export interface DynamicParts {
  reply: Reply;
  /** Read on every request: a reload that changes the seed swaps it. */
  readonly failures: FailureSource;
  streams?: StreamAnswers;
  webhooks?: AnswerWebhooks;
  /** Resilience: decides the request's fault (set on `x`) and returns the delay its latency shape drew. */
  decideFaultAndDelay(x: Exchange, endpoint: CompiledEndpoint, leaf: CompiledLeaf): number;
  /** What `resources.<name>` reads in an answer, when the server has resources. */
  resourceView?: (x: Exchange) => ResourceView | undefined;
  /** `serve --workers`: the other workers apply an answer's `setState`; resolves once all of them did. */
  shareStates?: (moves: ReadonlyArray<readonly [string, string]>) => Promise<void>;
}

/**
 * Dynamic answers at request time, for an endpoint whose answer varies: count the request, choose
 * the answer (a `responses` list where no `when` holds is the 404 of the match step), decide the
 * simulated failure, and — only when the request is answered — render the answer, advance the
 * sequences it went through and apply its `setState`, all on arrival so that the n-th request to
 * arrive is the n-th whatever the delays. The delay is the endpoint's plus the answer's own.
 */
export function answerDynamic(x: Exchange, endpoint: CompiledEndpoint, dynamic: DynamicAnswers, p: DynamicParts): void {
  const { failures } = p;
  // The request's session: its counters, sequences, scenario states and clock.
  const { answers, clock } = x.scope;
  const ctx = new LazyRequestContext({
    url: x.req.url ?? '/',
    mockPath: x.mockPath,
    headers: x.req.headers,
    body: x.body,
    request: answers.nextRequest(endpoint.key),
    state: answers.states,
    now: clock(),
    readParams: dynamic.readParams,
    seed: failures.seed,
    endpointKey: endpoint.key,
    seedBy: dynamic.seedBy,
    resources: p.resourceView?.(x),
  });
  const choice = dynamic.select(ctx, answers, failures.seed);
  if (choice === undefined) return p.reply.refuse(x, 'notFound', dynamic.closest(ctx));
  const { leaf } = choice;
  const fail = failures.shouldFail(endpoint.key, endpoint.failRate);
  let rendered: RenderedAnswer | undefined;
  let sends: unknown;
  let streamed: PreparedStream | undefined;
  let shared: Promise<void> | undefined;
  if (!fail) {
    rendered = leaf.fixed ?? leaf.render(ctx);
    if (leaf.stream !== undefined && rendered.problem === undefined && p.streams !== undefined)
      streamed = p.streams.render(leaf, endpoint, ctx);
    // A stream over the answer caps is a 500 saying so, as a body over them is.
    const tooLarge = streamed?.problem;
    if (tooLarge !== undefined)
      [rendered, streamed] = [
        { status: 500, headers: [], body: '', problem: tooLarge, problemMessage: tooLarge },
        undefined,
      ];
    for (const id of choice.advances) answers.advance(endpoint.key, id);
    for (const [name, state] of leaf.setState) answers.setScenario(name, state);
    // With `serve --workers`: every worker holds the new states before this answer is sent (a round trip only here).
    if (leaf.setState.length > 0 && p.shareStates !== undefined) shared = p.shareStates(leaf.setState);
    // Webhooks: evaluated with the request now, sent once the answer is (never on a failure or fault).
    if (leaf.send !== undefined && rendered.problem === undefined)
      sends = p.webhooks?.prepare(leaf.send, ctx, rendered, endpoint.key, x.scope.id);
  }
  const delayMs =
    endpoint.delayMs +
    leaf.delayMs +
    (endpoint.resilience === undefined ? 0 : p.decideFaultAndDelay(x, endpoint, leaf));
  if (shared !== undefined) return afterShared(x, shared, delayMs, leaf, rendered, p, streamed, sends);
  // No closure on the common path (no delay): finish is called directly.
  if (delayMs <= 0) return finish(x, leaf, rendered, p, streamed, sends);
  const timer = setTimeout(() => p.reply.guarded(x, finish, leaf, rendered, p, streamed, sends), delayMs);
  x.res.once('close', () => clearTimeout(timer));
}

/** An answer whose `setState` the other workers apply: written once they did, and not before its delay ran out. */
function afterShared(
  x: Exchange,
  shared: Promise<void>,
  delayMs: number,
  leaf: CompiledLeaf,
  rendered: RenderedAnswer | undefined,
  p: DynamicParts,
  streamed: PreparedStream | undefined,
  sends: unknown,
): void {
  const due = performance.now() + delayMs;
  let timer: NodeJS.Timeout | undefined;
  x.res.once('close', () => clearTimeout(timer));
  const go = (): void => {
    const left = due - performance.now();
    if (left <= 0) p.reply.guarded(x, finish, leaf, rendered, p, streamed, sends);
    else timer = setTimeout(() => p.reply.guarded(x, finish, leaf, rendered, p, streamed, sends), left);
  };
  shared.then(go, go);
}

/** Writes the answer (or the simulated failure, or the 500 of an answer that could not be made). */
function finish(
  x: Exchange,
  leaf: CompiledLeaf,
  rendered: RenderedAnswer | undefined,
  p: DynamicParts,
  streamed: PreparedStream | undefined,
  sends: unknown,
): void {
  const { reply } = p;
  if (x.res.destroyed) return;
  if (rendered === undefined) return reply.refuse(x, 'simulatedFailure');
  if (rendered.problem !== undefined)
    return reply.json(
      x,
      'response',
      500,
      internalErrorBody(rendered.problemMessage),
      `${leaf.label}: ${rendered.problem}`,
    );
  x.answer = leaf.label;
  if (streamed !== undefined) {
    const headers = answerHeadersWin(x, reply.answerHeaders(x, rendered, false));
    // A network fault (reset, slow, truncate…) acts on the whole stream's bytes, journaled with its stream record
    // when it ends; else the stream is written over time.
    if (x.fault !== undefined) return reply.faultStream(x, rendered.status, headers, streamed);
    // Its webhooks are sent once the stream has sent all its events (not when cut, reset or left).
    const complete =
      sends === undefined ? undefined : () => void (x.notes ??= []).push(...(p.webhooks?.fire(sends) ?? []));
    return p.streams!.send(x, rendered.status, headers, streamed, complete);
  }
  // The journal entry names the deliveries this answer caused (its notes).
  if (sends !== undefined && x.fault === undefined) (x.notes ??= []).push(...(p.webhooks?.fire(sends) ?? []));
  reply.send(x, 'response', rendered.status, reply.answerHeaders(x, rendered, rendered === leaf.fixed), rendered.body);
}
