import type { AnswerBody } from '../../answer/answer-body.js';
import type { CompiledEndpoint } from '../../answer/compile.js';
import type { CostRequest } from '../../answer/cost.js';
import type { LimitsConfig } from '../../config/types.js';
import type { Logger } from '../../logger.js';
import type { LimitGate, LimitVerdict, StoreLimitGate } from '../../pipeline/limits.js';
import {
  describeMeter,
  formatAmount,
  windowText,
  type MeterRefusal,
  type Reserves,
  type SettleToken,
} from '../../pipeline/meters.js';
import type { AfterAnswer, Exchange } from '../exchange.js';
import type { Reply } from '../reply.js';

/*
 * The meters' part of the limits step (src/http/steps/limits.ts): what a request reserves (its
 * endpoint's `cost:`), the refusals of a meter (its window full, a reserve that can never fit, a
 * spent budget — with the futile retries of a client that comes back for more), and the settle
 * after the answer, through the exchange's `afterAnswer`.
 */

/**
 * Futile retries (src/control/futile-retries.ts): a client that repeats a request refused because
 * a budget is spent. Lent to the limits step, which names no control-plane module.
 */
export interface FutileWatch {
  /** A request refused as spent, to `route`: its note (`futile retry (n)`) when its client was refused so there before. */
  exhausted(x: Exchange, route: string): string | undefined;
  /** A request admitted to `route`: its client is no longer refused there. */
  admitted(x: Exchange, route: string): void;
  /** Forgets every refusal in a session (`''`: the default one): its usage was reset, or it was dropped. */
  forget(scope: string): void;
}

/** The request as a cost reads it. */
export function costRequest(x: Exchange, now: number, state: Readonly<Record<string, string>>): CostRequest {
  return { url: x.req.url ?? '/', mockPath: x.mockPath, headers: x.req.headers, body: x.body, state, now };
}

/** What `limits`' meters reserve for a request to `target` (undefined: it asks no meter), its notes added to the request's. */
export function reservesOf(
  x: Exchange,
  limits: LimitsConfig,
  target: CompiledEndpoint | undefined,
  now: number,
  state: Readonly<Record<string, string>>,
): Reserves | undefined {
  if (limits.meters === undefined || target?.cost === undefined) return undefined;
  const fixed = target.cost.fixedReserves(limits.meters);
  if (fixed !== undefined) return fixed;
  const { reserves, notes } = target.cost.reserves(limits.meters, costRequest(x, now, state));
  if (notes !== undefined) (x.notes ??= []).push(...notes);
  return reserves;
}

/** The journal's note and the answer's message for a meter's refusal (OpenAI's words, for the meter). */
function refusalWords(refused: MeterRefusal): { note: string; message: string } {
  const { meter } = refused;
  const requested = formatAmount(refused.requested);
  const used = formatAmount(refused.used);
  const limit = formatAmount(meter.limit);
  const per =
    meter.period === 'window'
      ? `per ${windowText(meter.windowMs)}`
      : meter.period === 'month'
        ? 'per month'
        : 'in total';
  if (refused.why === 'never' && refused.requested > meter.limit) {
    return {
      note: `can never fit: ${meter.name} ${requested} asked, over the limit of ${describeMeter(meter)}`,
      message: `Request too large on ${meter.name} ${per}: Limit ${limit}, Requested ${requested}. It can never fit: reduce what the request asks for.`,
    };
  }
  if (refused.why === 'never') {
    // A total with room left, but less than asked: it does not come back by waiting.
    return {
      note: `can never fit: ${meter.name} ${requested} asked, ${used} of ${describeMeter(meter)} used`,
      message: `Request too large on ${meter.name} ${per}: Limit ${limit}, Used ${used}, Requested ${requested}. It can never fit: reduce what the request asks for.`,
    };
  }
  if (refused.why === 'exhausted') {
    return {
      note: `${meter.name} spent: ${used} of ${describeMeter(meter)}`,
      message: `The ${meter.name} budget of ${limit} ${per} is spent (${used} used). Waiting does not help: it must be raised or reset.`,
    };
  }
  const wait = (refused.retryAfterMs / 1000).toFixed(3).replace(/\.?0+$/, '');
  return {
    note: `rate limited: ${meter.name} ${used} of ${describeMeter(meter)} used, ${requested} asked`,
    message: `Rate limit reached on ${meter.name} ${per}: Limit ${limit}, Used ${used}, Requested ${requested}. Please try again in ${wait}s.`,
  };
}

/** Answers a meter's refusal (`verdict.meter`): the rate-limit 429, or the meter's `exhausted` answer. */
export function refuseByMeter(
  x: Exchange,
  reply: Reply,
  verdict: LimitVerdict,
  futile: FutileWatch | undefined,
  route: string,
): void {
  const refused = verdict.meter!;
  const { note, message } = refusalWords(refused);
  if (refused.why !== 'exhausted') return reply.refuse(x, 'rateLimited', note, message);
  const again = futile?.exhausted(x, route);
  if (again !== undefined) (x.notes ??= []).push(again); // a note of its own: the journal lists them
  reply.refuse(x, refused.meter.exhausted, note, message);
}

/** The route a futile retry is remembered by: the endpoint's, else the method and path. */
export function routeOf(x: Exchange, target: CompiledEndpoint | undefined): string {
  return target?.key ?? `${x.method} ${x.mockPath}`;
}

/** Reads an answer's body as a settle sees it: JSON as a value, else its text. The last one is kept (a static answer is the same bytes each time). */
let lastBody: AnswerBody | undefined;
let lastValue: unknown;
function bodyValueOf(body: AnswerBody): unknown {
  if (body === lastBody) return lastValue;
  const text = typeof body === 'string' ? body : body.toString('utf8');
  let value: unknown = text;
  try {
    value = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: the text
  }
  lastBody = body;
  lastValue = value;
  return value;
}

function someNonZero(list: readonly number[]): boolean {
  for (let i = 0; i < list.length; i++) if (list[i] !== 0) return true;
  return false;
}

/** A fault that sends the whole answer (`slow`) still settles; one that sends none, or half, does not. */
const delivered = (x: Exchange): boolean => x.fault === undefined || x.fault.kind === 'slow';

/** Applies an admission's settle (`result`, settle − reserve per meter) on the gate that admitted it, with its notes. */
function applySettle(
  done: Exchange,
  gate: LimitGate | StoreLimitGate,
  token: SettleToken,
  result: { deltas: readonly number[]; notes: readonly string[] | undefined },
  logger: Logger,
): void {
  const { deltas, notes } = result;
  if (notes !== undefined) (done.notes ??= []).push(...notes);
  if (!someNonZero(deltas)) return;
  if (!gate.shared) return gate.meters.settle(token, deltas);
  gate
    .settle(token, deltas)
    .catch((err: Error) => logger.warn(`settle of ${done.method} ${done.path} not counted: ${err.message}`));
}

/** The request of a settle that reads the answer alone: never asked (see CompiledCost.answerOnly). */
const noRequest = (): never => {
  throw new Error('a settle of the answer alone asked for the request');
};

/**
 * Sets the settle of an admitted request: after its answer, the cost's `settle` is read from the
 * answer (a stream's usage), and the meters are corrected by settle − reserve on the gate that
 * admitted it. An answer that is not the endpoint's own (a 404, a simulated failure, a fault) settles
 * nothing: the reserve stands.
 */
export function settleAfter(
  x: Exchange,
  gate: LimitGate | StoreLimitGate,
  target: CompiledEndpoint,
  token: SettleToken,
  clock: () => number,
  state: Readonly<Record<string, string>>,
  logger: Logger,
): void {
  x.afterAnswer = (done, step, status, body) => {
    if (step !== 'response' || !delivered(done)) return;
    const response = { status, body: done.stream !== undefined ? { usage: done.usage } : bodyValueOf(body) };
    const result = target.cost!.deltas(token.meters, token.reserves, () => costRequest(done, clock(), state), response);
    applySettle(done, gate, token, result, logger);
  };
}

/**
 * The settle after the answer of the admissions by `gate` to `target` whose cost settles from the
 * answer alone (`cost.answerOnly`): as {@link settleAfter} sets, but one function for every such
 * admission — it reads nothing of the request, so it needs no clock or scenario states of its own —
 * which takes the admission's token from the request's verdict (`x.verdict.settle`). The usual
 * answer, the same as the last, settles with the figures of the last, made again of nothing.
 */
export function answerSettle(gate: LimitGate | StoreLimitGate, target: CompiledEndpoint, logger: Logger): AfterAnswer {
  const cost = target.cost!;
  return (done, step, status, body) => {
    if (step !== 'response' || !delivered(done)) return;
    const token = done.verdict!.settle!;
    const value = done.stream !== undefined ? { usage: done.usage } : bodyValueOf(body);
    const result =
      cost.lastDeltas(token.meters, token.reserves, status, value) ??
      cost.deltas(token.meters, token.reserves, noRequest, { status, body: value });
    applySettle(done, gate, token, result, logger);
  };
}
