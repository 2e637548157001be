import type { CompiledEndpoint } from '../answer/compile.js';
import type { Clock } from '../clock.js';
import type { LimitsConfig, RateLimitConfig } from '../config/types.js';
import type { NamedKey } from '../pipeline/auth.js';
import { closestToFull, endpointRefusal, keyNameOf, type KeyLimits } from '../pipeline/key-limits.js';
import type { LimitGate, LimitVerdict, StoreLimitGate } from '../pipeline/limits.js';
import type { RateLimiter } from '../pipeline/rate-limit.js';
import type { Exchange } from './exchange.js';

/** What the keyed limit steps need from the handler. */
export interface KeyedAdmitDeps {
  /** The gate of `apiKey`, the key named `default`. */
  limits: LimitGate | StoreLimitGate;
  /** Required once a config has `keys:` or endpoint limits (the server always gives one). */
  keyLimits: KeyLimits | undefined;
  clock: Clock;
  /** The config endpoint a request would match (its `limits`); stubs have none. */
  configEndpoint(x: Exchange, mockPath: string): CompiledEndpoint | undefined;
  /** The handler's steps after the limits, with their verdict. */
  afterLimits(x: Exchange, mockPath: string, verdict: LimitVerdict): void;
  /** A bug met on the way: the handler's 500. */
  failed(x: Exchange, err: unknown): void;
}

/**
 * The limit steps of a key of `keys:` (its plan, or `limits`) and of an endpoint with limits of its
 * own: the endpoint's window for this key first — a request it refuses gets the rate-limit 429 and
 * consumes nothing of the plan's window — then the plan's gate. An in-process gate counts the
 * endpoint window only once the plan admitted the request; with a shared store (an answer after a
 * round trip) the endpoint slot is taken before asking, so the endpoint limit stays exact.
 * A config with neither (`apiKey` alone, no endpoint limits) never comes here.
 */
export function createKeyedAdmit(deps: KeyedAdmitDeps): (x: Exchange, mockPath: string, auth: 'ok' | NamedKey) => void {
  const { limits, clock, afterLimits, failed } = deps;

  function admitWith(x: Exchange, mockPath: string, gate: LimitGate | StoreLimitGate, config: LimitsConfig, now: number, limiter: RateLimiter | undefined, window: RateLimitConfig | undefined): void {
    if (limiter === undefined || window === undefined) {
      const admitted = gate.admit(config, now);
      if (admitted instanceof Promise) return void admitted.then((verdict) => afterLimits(x, mockPath, verdict)).catch((err: unknown) => failed(x, err));
      return afterLimits(x, mockPath, admitted);
    }
    if (gate.shared) {
      const taken = limiter.record(now);
      return void gate.admit(config, now).then((verdict) => afterLimits(x, mockPath, closestToFull(verdict, taken))).catch((err: unknown) => failed(x, err));
    }
    const verdict = gate.admit(config, now);
    afterLimits(x, mockPath, closestToFull(verdict, verdict.outcome === 'admitted' ? limiter.record(now) : limiter.check(window, now)));
  }

  return function admitKeyed(x, mockPath, auth) {
    const { compiled } = x;
    const keyLimits = deps.keyLimits;
    if (keyLimits === undefined) throw new Error('keys or endpoint limits are configured, but the server has no key limits');
    const now = clock();
    const name = keyNameOf(auth);
    const config = auth === 'ok' ? compiled.config.limits : compiled.config.keys![auth.index]!.limits;
    const target = compiled.endpointLimits ? deps.configEndpoint(x, mockPath) : undefined;
    const window = target?.rateLimit;
    const limiter = window === undefined ? undefined : keyLimits.endpointLimiter(target!.key, name);
    if (limiter !== undefined) {
      const refused = endpointRefusal(limiter, window!, now);
      if (refused !== undefined) return afterLimits(x, mockPath, refused);
    }
    const gate = auth === 'ok' ? limits : keyLimits.gate(name);
    // A key's gate is made (its state file read) on first use: that request waits for it.
    if (gate instanceof Promise) return void gate.then((g) => admitWith(x, mockPath, g, config, now, limiter, window)).catch((err: unknown) => failed(x, err));
    admitWith(x, mockPath, gate, config, now, limiter, window);
  };
}
