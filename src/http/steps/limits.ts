import type { CompiledEndpoint } from '../../answer/compile.js';
import type { LimitsConfig } from '../../config/types.js';
import { admitWithEndpoint, keyNameOf } from '../../pipeline/key-limits.js';
import type { LimitGate, LimitVerdict, StoreLimitGate } from '../../pipeline/limits.js';
import type { Exchange } from '../exchange.js';
import type { Reply } from '../reply.js';
import type { Next, Step } from '../steps.js';
import { configEndpoint } from './match.js';

export interface LimitsStepParts {
  reply: Reply;
}

/**
 * The limits step: the rate limit and the monthly quota (429, journal steps `rate_limit` and
 * `quota`), or the 503 of a shared store that cannot be reached. Its verdict goes in `x.verdict`,
 * whose headers every later answer carries. An in-process gate decides at once; a shared store
 * (Redis) answers later, and the request goes on then.
 */
export function limitsStep(p: LimitsStepParts): Step {
  const { reply } = p;

  /** The verdict's refusal, or the next step. */
  function decided(x: Exchange, next: Next, verdict: LimitVerdict): void {
    x.verdict = verdict;
    if (verdict.outcome === 'admitted') return next(x);
    if (verdict.outcome === 'store_unavailable') return reply.refuse(x, 'storeUnavailable');
    reply.refuse(x, verdict.outcome === 'rate_limited' ? 'rateLimited' : 'quotaExceeded');
  }

  /**
   * The limits of a key of `keys:` (its plan, or `limits`) and of an endpoint with limits of its
   * own: the endpoint's window for this key first — a request it refuses gets the rate-limit 429 and
   * consumes nothing of the plan's window — then the plan's gate; the endpoint's slot is counted only
   * when the plan admitted the request. An in-process gate decides both here, in one tick; a shared
   * store decides both in one atomic script call, with the endpoint window kept in Redis too, so the
   * endpoint limit is exact across servers.
   */
  function admitKeyed(x: Exchange, next: Next): void {
    const { compiled, named, scope } = x;
    const keyLimits = scope.keyLimits;
    if (keyLimits === undefined) throw new Error('keys or endpoint limits are configured, but the server has no key limits');
    const now = scope.clock();
    const name = keyNameOf(named ?? 'ok');
    const config = named === undefined ? compiled.config.limits : compiled.config.keys![named.index]!.limits;
    const target = compiled.endpointLimits ? configEndpoint(compiled, x.method, x.mockPath) : undefined;
    const gate = named === undefined ? scope.limits : keyLimits.gate(name);
    // A key's gate is made (its state file read) on first use: that request waits for it.
    if (gate instanceof Promise) return void gate.then((g) => admitWith(x, next, g, config, now, name, target)).catch((err: unknown) => reply.failed(x, err));
    admitWith(x, next, gate, config, now, name, target);
  }

  function admitWith(x: Exchange, next: Next, gate: LimitGate | StoreLimitGate, config: LimitsConfig, now: number, name: string, target: CompiledEndpoint | undefined): void {
    const window = target?.rateLimit;
    if (gate.shared) {
      const endpoint = window === undefined ? undefined : { route: target!.key, rateLimit: window };
      return void gate.admit(config, now, endpoint).then((verdict) => decided(x, next, verdict)).catch((err: unknown) => reply.failed(x, err));
    }
    if (window === undefined) return decided(x, next, gate.admit(config, now));
    decided(x, next, admitWithEndpoint(gate, config, now, x.scope.keyLimits!.endpointLimiter(target!.key, name), window));
  }

  return {
    name: 'limits',
    run(x, next) {
      // A key of `keys:`, or endpoint limits: counted per key (src/pipeline/key-limits.ts).
      if (x.named !== undefined || x.compiled.endpointLimits) return admitKeyed(x, next);
      const { scope } = x;
      const admitted = scope.limits.admit(x.compiled.config.limits, scope.clock());
      // Only a shared store answers later; the in-process gate's verdict is used at once.
      if (admitted instanceof Promise) return void admitted.then((verdict) => decided(x, next, verdict)).catch((err: unknown) => reply.failed(x, err));
      decided(x, next, admitted);
    },
  };
}
