// The third phase of a server's start: the limits of the default key and its usage store, and the
// limits of each key of `keys:` and of the endpoints' own windows (src/pipeline/key-limits.ts).
import { createKeyLimits, type KeyLimits } from '../pipeline/key-limits.js';
import { createLimitGate, type LimitGateHandle } from '../pipeline/limits.js';
import { limitsDecide } from '../pipeline/store-gate-verdict.js';
import type { Config } from '../config/types.js';
import { keyNames, type StartContext } from './context.js';
import type { Foundation } from './foundation.js';
import type { ServedParts } from './runtime.js';

export interface LimitParts {
  limits: LimitGateHandle;
  keyLimits: KeyLimits;
}

export async function startLimits(ctx: StartContext, p: Foundation & ServedParts): Promise<LimitParts> {
  const { options, config, logger, stops } = ctx;
  // Where counts are kept: the same for the default key's limits and for each key of `keys:`.
  const limitPlace = {
    state: options.state ?? false,
    clock: p.clock,
    logger,
    store: p.storeUrl,
    storeDown: config.limits.storeDown,
    limited: configDecides(config),
    project: config.project,
  };
  const limits = await createLimitGate(limitPlace);
  stops.push(() => limits.close()); // writes what was counted
  // The keys of `keys:`, each limited on its own, and the endpoints' own windows (src/pipeline/key-limits.ts).
  const keyLimits = createKeyLimits(limitPlace);
  stops.push(() => keyLimits.close());
  await keyLimits.prepare(keyNames(config));
  p.runtime.onSwap(
    (_prev, next) =>
      void keyLimits
        .prepare(keyNames(next))
        .catch((err: Error) => logger.warn(`could not open the usage of a key: ${err.message}`)),
  );
  return { limits, keyLimits };
}

/** Whether any limit of the config decides anything: `limits`, a key's (its plan's), an endpoint's own window. */
function configDecides(config: Config): boolean {
  return (
    limitsDecide(config.limits) ||
    (config.keys ?? []).some((key) => limitsDecide(key.limits)) ||
    config.endpoints.some((endpoint) => endpoint.rateLimit !== undefined)
  );
}
