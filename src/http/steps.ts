import type { CompiledEndpoint } from '../answer/compile.js';
import type { Exchange } from './exchange.js';

/** The rest of the request's steps: what a step calls when it does not answer. */
export type Next = (x: Exchange) => void;

/** What a step needs of the request's body before any step runs: its first 64 KiB for the journal only, all of it, or all of it read as a value (`x.body`). */
export type BodyNeed = 'journal' | 'whole' | 'value';

/**
 * One step of the request path (the list is src/request-steps.ts). A step either answers, through
 * the one reply (src/http/reply.ts), or passes the request on with `next(x)` — at once, or after a
 * store, a stub registry or an upstream answered. It never throws for bad input; what it throws by
 * mistake becomes a JSON 500. A step that goes async catches its own rejections (`reply.failed`).
 */
export interface Step {
  /** For errors and the architecture page: `auth`, `limits`, `stub match`… */
  readonly name: string;
  run(x: Exchange, next: Next): void;
  /**
   * Asked by the body step, before the body is read, for a request that has one: the endpoint this
   * step would send the request to (the match steps); the first step that names one wins.
   */
  target?(x: Exchange): CompiledEndpoint | undefined;
  /** Asked by the limits step: whether an endpoint `target` may name for this request has limits of its own that the config's endpoints do not show (a run-time stub's). */
  limited?(x: Exchange): boolean;
  /** Asked by the body step, before the body is read: what this step needs of it for `target` (the endpoint the request is headed for). */
  wantsWholeBody?(x: Exchange, target: CompiledEndpoint | undefined): BodyNeed;
  /** Called once when the chain is built, with the steps after this one (the body step asks them what they need). */
  link?(later: readonly Step[]): void;
  /**
   * A step that scopes requests (sessions) acts at the front too, before mockapi's own paths and
   * preflight are told apart: it may take a prefix off the path (`x.path`, `req.url`), name the
   * session (`x.session`) and pick its parts (`x.scope`). False when it answered (a refusal).
   * The handler calls it for every request, admin calls included.
   */
  enter?(x: Exchange): boolean;
}

/**
 * Composes the steps into one function, once, at start: each step's `next` is the composed rest,
 * so a request allocates nothing to walk them (a plain call per step; no promise, no closure).
 * `last` runs when every step passed the request on.
 */
export function chain(steps: readonly Step[], last: Next): Next {
  steps.forEach((step, i) => step.link?.(steps.slice(i + 1)));
  return steps.reduceRight<Next>((next, step) => {
    const run = step.run.bind(step);
    return (x) => run(x, next);
  }, last);
}

/**
 * What the request needs of its body, as the steps say: the strongest need of any of them for the
 * endpoint the first `target` names.
 */
export function bodyNeedOf(steps: readonly Step[], x: Exchange): BodyNeed {
  let target: CompiledEndpoint | undefined;
  for (const step of steps) {
    if (step.target === undefined) continue;
    target = step.target(x);
    if (target !== undefined) break;
  }
  let need: BodyNeed = 'journal';
  for (const step of steps) {
    const wanted = step.wantsWholeBody?.(x, target);
    if (wanted === 'value') return wanted;
    if (wanted === 'whole') need = wanted;
  }
  return need;
}
