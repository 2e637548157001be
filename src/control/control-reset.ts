/**
 * The control plane's reset: what Redis holds first (the month, the rate windows), then the
 * resources, then this process's parts, each part chosen by `ResetParts`; a `usage` event after.
 */
import { RESET_PARTS } from './call-input.js';
import type { StoreLimitGate } from '../pipeline/limits.js';
import { ControlError } from './control-error.js';
import { stepClock } from './control-clock.js';
import type { ControlEvent, ControlPlaneDeps, ResetParts, ResetResult } from './control-types.js';
import { usageReport } from './control-usage.js';
import { resetKeysHere, resetKeysInStore } from './key-usage.js';

type Emit = (event: ControlEvent) => void;

/**
 * The plane's `reset`: in process (no store, no resources) it answers at once; otherwise once the
 * store and the resources are reset, or it rejects having changed nothing here.
 */
export function resetServer(deps: ControlPlaneDeps, emit: Emit, parts: ResetParts): ResetResult | Promise<ResetResult> {
  const resources = parts.resources !== false && deps.resources?.active() === true ? deps.resources : undefined;
  if (resources === undefined && !deps.limits.shared) {
    const reset = resetHere(deps, parts);
    const after = usageReport(deps);
    if (after instanceof Promise) {
      return after.then((data) => {
        emit({ type: 'usage', data });
        return { reset, usage: data, scenarios: deps.answers.scenarios() };
      });
    }
    const result = { reset, usage: after, scenarios: deps.answers.scenarios() };
    emit({ type: 'usage', data: result.usage });
    return result;
  }
  return resetWithStore(deps, emit, parts, resources);
}

/** A reset with a store or resources: what is kept out of this process first. */
async function resetWithStore(
  deps: ControlPlaneDeps,
  emit: Emit,
  parts: ResetParts,
  resources: ControlPlaneDeps['resources'],
): Promise<ResetResult> {
  const { limits, virtualClock } = deps;
  // What Redis holds first: when it cannot be reached the call fails having changed nothing
  // here (not even the clock), and repeating it (each part is idempotent) does the whole reset.
  const zeroed = limits.shared ? await resetLimitsInStore(deps, limits, parts) : undefined;
  if (resources !== undefined) {
    // The collections' seed reads the clock: it goes back to its start between emptying and seeding.
    const resetClock = (): void => {
      if (parts.clock !== false && virtualClock !== undefined) stepClock(deps, (c) => c.reset(), virtualClock);
    };
    await resources.reset(resetClock).catch((err: unknown) => {
      if (zeroed === undefined || !(err instanceof ControlError)) throw err;
      throw new ControlError(err.status, err.code, `${err.message} (${zeroed} already zeroed in the store)`);
    });
  }
  const reset = resetHere(deps, resources === undefined ? parts : { ...parts, resources: false });
  const result = {
    reset: resources === undefined ? reset : [...reset, 'resources' as const],
    usage: await usageReport(deps),
    scenarios: deps.answers.scenarios(),
  };
  emit({ type: 'usage', data: result.usage });
  return result;
}

/** Resets this process's parts (with a store, its own part of the limits: the store's is reset apart). */
export function resetHere(deps: ControlPlaneDeps, parts: ResetParts, followed?: Promise<void>[]): (keyof ResetParts)[] {
  const { limits, virtualClock } = deps;
  // `resources` is a part only of a server with collections (the reset above did it).
  const chosen = RESET_PARTS.filter(
    (part) => parts[part] !== false && (part !== 'resources' || deps.resources?.active() === true),
  );
  if (chosen.includes('clock') && virtualClock !== undefined) stepClock(deps, (c) => c.reset(), virtualClock); // first: the parts below read it
  const now = deps.clock();
  if (limits.shared) limits.forget({ usage: chosen.includes('usage'), rateLimit: chosen.includes('rateLimit') }, now);
  resetKeysHere(
    deps.keyLimits,
    { usage: chosen.includes('usage'), rateLimit: chosen.includes('rateLimit') },
    now,
    followed,
  );
  // The Retry-Afters given came from the limits reset here: a client back now is not early.
  if (chosen.includes('usage') || chosen.includes('rateLimit')) deps.clients.clear();
  // A spent budget reset: a client that asks again is not retrying in vain.
  if (chosen.includes('usage')) deps.futile?.forget();
  for (const part of chosen) resetPart(deps, part, now, followed);
  return chosen;
}

/** Resets one part of this process's; the limits' parts only without a store. */
function resetPart(deps: ControlPlaneDeps, part: keyof ResetParts, now: number, followed?: Promise<void>[]): void {
  const { limits, answers } = deps;
  if (part === 'journal') deps.journal.clear();
  else if (part === 'usage' && !limits.shared) {
    if (followed === undefined) deps.usage.reset(now);
    else followed.push(deps.usage.followReset(now)); // the worker that took the call wrote the reset
    limits.meters.clear(false, true);
  } else if (part === 'rateLimit' && !limits.shared) {
    limits.resetRateLimit();
    limits.meters.clear(true, false);
  } else if (part === 'sequences') answers.resetSequences();
  else if (part === 'scenarios') answers.resetScenarios();
  else if (part === 'stubs') deps.stubs?.clear();
  else if (part === 'resources') deps.resources?.forget();
}

/**
 * A reset's parts that Redis holds (the month, the rate window), zeroed for every server; what was
 * zeroed, in words, or a 503 `store_unavailable` when Redis could not apply them.
 */
async function resetLimitsInStore(
  deps: ControlPlaneDeps,
  gate: StoreLimitGate,
  parts: ResetParts,
): Promise<string | undefined> {
  const store = { usage: parts.usage !== false, rateLimit: parts.rateLimit !== false };
  if (!store.usage && !store.rateLimit) return undefined;
  const what =
    store.usage && store.rateLimit ? 'the month and the rate window' : store.usage ? 'the month' : 'the rate window';
  await Promise.all([
    gate.reset(store),
    resetKeysInStore(deps.runtime.holder.current.config, deps.keyLimits, store),
  ]).catch((err: Error) => {
    throw new ControlError(
      503,
      'store_unavailable',
      `${err.message}: ${what} may not be reset, nothing else was; repeat the call once it is back`,
    );
  });
  return what;
}
