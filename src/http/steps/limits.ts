import type { CompiledEndpoint } from '../answer/compile.js';
import type { Clock } from '../clock.js';
import type { LimitsConfig } from '../config/types.js';
import type { NamedKey } from '../pipeline/auth.js';
import { admitWithEndpoint, keyNameOf, type KeyLimits } from '../pipeline/key-limits.js';
import type { LimitGate, LimitVerdict, StoreLimitGate } from '../pipeline/limits.js';
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
 * consumes nothing of the plan's window — then the plan's gate; the endpoint's slot is counted only
 * when the plan admitted the request. An in-process gate decides both here, in one tick; a shared
 * store decides both in one atomic script call, with the endpoint window kept in Redis too, so the
 * endpoint limit is exact across servers. A config with neither (`apiKey` alone, no endpoint
 * limits) never comes here.
 */
export function createKeyedAdmit(deps: KeyedAdmitDeps): (x: Exchange, mockPath: string, auth: 'ok' | NamedKey) => void {
  const { limits, clock, afterLimits, failed } = deps;

  function admitWith(x: Exchange, mockPath: string, gate: LimitGate | StoreLimitGate, config: LimitsConfig, now: number, name: string, target: CompiledEndpoint | undefined): void {
    const window = target?.rateLimit;
    if (gate.shared) {
      const endpoint = window === undefined ? undefined : { route: target!.key, rateLimit: window };
      return void gate.admit(config, now, endpoint).then((verdict) => afterLimits(x, mockPath, verdict)).catch((err: unknown) => failed(x, err));
    }
    if (window === undefined) return afterLimits(x, mockPath, gate.admit(config, now));
    afterLimits(x, mockPath, admitWithEndpoint(gate, config, now, deps.keyLimits!.endpointLimiter(target!.key, name), window));
  }

  return function admitKeyed(x, mockPath, auth) {
    const { compiled } = x;
    const keyLimits = deps.keyLimits;
    if (keyLimits === undefined) throw new Error('keys or endpoint limits are configured, but the server has no key limits');
    const now = clock();
    const name = keyNameOf(auth);
    const config = auth === 'ok' ? compiled.config.limits : compiled.config.keys![auth.index]!.limits;
    const target = compiled.endpointLimits ? deps.configEndpoint(x, mockPath) : undefined;
    const gate = auth === 'ok' ? limits : keyLimits.gate(name);
    // A key's gate is made (its state file read) on first use: that request waits for it.
    if (gate instanceof Promise) return void gate.then((g) => admitWith(x, mockPath, g, config, now, name, target)).catch((err: unknown) => failed(x, err));
    admitWith(x, mockPath, gate, config, now, name, target);
  };
}
