import type { CompiledEndpoint } from '../../answer/compile.js';
import type { LimitsConfig } from '../../config/types.js';
import type { Logger } from '../../logger.js';
import { admitWithEndpoint, keyNameOf } from '../../pipeline/key-limits.js';
import type { LimitGate, LimitVerdict, StoreLimitGate } from '../../pipeline/limits.js';
import type { AfterAnswer, Exchange } from '../exchange.js';
import type { Reply } from '../reply.js';
import type { Next, Step } from '../steps.js';
import { answerSettle, refuseByMeter, reservesOf, routeOf, settleAfter, type FutileWatch } from './limits-meters.js';
import { configEndpoint } from './match.js';

export type { FutileWatch } from './limits-meters.js';

export interface LimitsStepParts {
  reply: Reply;
  /** Futile retries of spent budgets (src/control/futile-retries.ts); without it, none are noted. */
  futile?: FutileWatch;
  /** Where a settle that a shared store could not count is said. */
  logger?: Logger;
}

const quietLogger: Pick<Logger, 'warn'> = { warn() {} };

/**
 * The limits step: the rate limit, the monthly quota and the meters (429, journal steps
 * `rate_limit` and `quota`; a spent meter answers as it says, `quotaExceeded` or
 * `insufficientQuota`), or the 503 of a shared store that cannot be reached. Its verdict goes in
 * `x.verdict`, whose headers every later answer carries. An in-process gate decides at once; a
 * shared store (Redis) answers later, and the request goes on then. A request admitted with a
 * reserve on some meter settles its cost after its answer (`x.afterAnswer`).
 */
export function limitsStep(p: LimitsStepParts): Step {
  const { reply } = p;
  // The gates, the clock and the scenario states a cost reads are the request's session's (`x.scope`).
  // The steps after this one that name where a request is headed: a run-time stub, then the config's endpoint.
  let matchers: readonly Step[] = [];
  /** The matchers that may name an endpoint with limits the config does not show (a run-time stub with its own rate limit). */
  let limiting: readonly Step[] = [];

  /** Whether the request's limits depend on the endpoint it is headed for: a config endpoint's or a stub's own window, or meters. */
  function perEndpoint(x: Exchange): boolean {
    if (x.compiled.endpointLimits || x.compiled.metered) return true;
    for (const step of limiting) if (step.limited!(x)) return true;
    return false;
  }

  /** The endpoint the request is headed for (its limits and `cost:`): the newest stub of its route, else the config's endpoint. */
  function targetOf(x: Exchange): CompiledEndpoint | undefined {
    for (const step of matchers) {
      const target = step.target?.(x);
      if (target !== undefined) return target;
    }
    return matchers.length === 0 ? configEndpoint(x.compiled, x.method, x.mockPath) : undefined;
  }

  // The settle of the last gate and endpoint whose cost settles from the answer alone: most requests
  // ask the same gate for the same endpoint, and then need no function made for them.
  let lastSettle: { gate: LimitGate | StoreLimitGate; target: CompiledEndpoint; after: AfterAnswer } | undefined;
  function answerSettleOf(gate: LimitGate | StoreLimitGate, target: CompiledEndpoint): AfterAnswer {
    if (lastSettle?.gate !== gate || lastSettle.target !== target)
      lastSettle = { gate, target, after: answerSettle(gate, target, (p.logger ?? quietLogger) as Logger) };
    return lastSettle.after;
  }

  /** The verdict's refusal, or the next step (with the settle after the answer, when the request reserved). */
  function decided(
    x: Exchange,
    next: Next,
    verdict: LimitVerdict,
    gate?: LimitGate | StoreLimitGate,
    target?: CompiledEndpoint,
  ): void {
    x.verdict = verdict;
    if (verdict.outcome === 'admitted') {
      if (verdict.settle !== undefined && target?.cost?.settles === true) {
        if (target.cost.answerOnly) x.afterAnswer = answerSettleOf(gate!, target);
        else
          settleAfter(
            x,
            gate!,
            target,
            verdict.settle,
            x.scope.clock,
            x.scope.answers.states,
            (p.logger ?? quietLogger) as Logger,
          );
      }
      if (verdict.meters !== undefined) p.futile?.admitted(x, routeOf(x, target));
      return next(x);
    }
    if (verdict.outcome === 'store_unavailable') return reply.refuse(x, 'storeUnavailable');
    if (verdict.meter !== undefined) return refuseByMeter(x, reply, verdict, p.futile, routeOf(x, target));
    reply.refuse(x, verdict.outcome === 'rate_limited' ? 'rateLimited' : 'quotaExceeded');
  }

  /**
   * The limits of a key of `keys:` (its plan, or `limits`), of an endpoint with limits of its own,
   * and of meters: the endpoint's window for this key first — a request it refuses gets the
   * rate-limit 429 and consumes nothing of the plan's window — then the plan's gate (its window,
   * month and meters, the request's reserves from its endpoint's `cost:`); the endpoint's slot is
   * counted only when the plan admitted the request. An in-process gate decides all of it here, in
   * one tick; a shared store decides all of it in one atomic script call, so the limits are exact
   * across servers.
   */
  function admitKeyed(x: Exchange, next: Next): void {
    const { compiled, named, scope } = x;
    const keyLimits = scope.keyLimits;
    const now = scope.clock();
    const name = keyNameOf(named ?? 'ok');
    const config = named === undefined ? compiled.config.limits : compiled.config.keys![named.index]!.limits;
    const target = perEndpoint(x) ? targetOf(x) : undefined;
    if (named === undefined) return admitWith(x, next, scope.limits, config, now, name, target);
    if (keyLimits === undefined)
      throw new Error('keys or endpoint limits are configured, but the server has no key limits');
    const gate = keyLimits.gate(name);
    // A key's gate is made (its state file read) on first use: that request waits for it.
    if (gate instanceof Promise)
      return void gate
        .then((g) => admitWith(x, next, g, config, now, name, target))
        .catch((err: unknown) => reply.failed(x, err));
    admitWith(x, next, gate, config, now, name, target);
  }

  function admitWith(
    x: Exchange,
    next: Next,
    gate: LimitGate | StoreLimitGate,
    config: LimitsConfig,
    now: number,
    name: string,
    target: CompiledEndpoint | undefined,
  ): void {
    const window = target?.rateLimit;
    // Only a cost reads the session's scenario states (a session makes them on first use).
    const reserves =
      target?.cost === undefined ? undefined : reservesOf(x, config, target, now, x.scope.answers.states);
    if (gate.shared) {
      const endpoint = window === undefined ? undefined : { route: target!.key, rateLimit: window };
      const verdict = gate.admit(config, now, endpoint, reserves);
      if (!(verdict instanceof Promise)) return decided(x, next, verdict, gate, target);
      return void verdict.then((v) => decided(x, next, v, gate, target)).catch((err: unknown) => reply.failed(x, err));
    }
    if (window === undefined) return decided(x, next, gate.admit(config, now, reserves), gate, target);
    const keyLimits = x.scope.keyLimits;
    if (keyLimits === undefined) throw new Error('endpoint limits are configured, but the server has no key limits');
    decided(
      x,
      next,
      admitWithEndpoint(gate, config, now, keyLimits.endpointLimiter(target!.key, name), window, reserves),
      gate,
      target,
    );
  }

  return {
    name: 'limits',
    run(x, next) {
      // A key of `keys:`, endpoint limits or meters: counted per key, with the endpoint looked up first.
      if (x.named !== undefined || perEndpoint(x)) return admitKeyed(x, next);
      const { scope } = x;
      const admitted = scope.limits.admit(x.compiled.config.limits, scope.clock());
      // Only a shared store answers later; the in-process gate's verdict is used at once.
      if (admitted instanceof Promise)
        return void admitted.then((verdict) => decided(x, next, verdict)).catch((err: unknown) => reply.failed(x, err));
      decided(x, next, admitted);
    },
    link(later) {
      matchers = later.filter((step) => step.target !== undefined);
      limiting = matchers.filter((step) => step.limited !== undefined);
    },
    // A cost that reads the body needs it as a value before the limits are asked (the endpoint the request is headed for).
    wantsWholeBody: (x, target) => (x.compiled.metered && target?.cost?.readsBody === true ? 'value' : 'journal'),
  };
}
