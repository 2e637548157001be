import type { AnswerState } from '../answer/answer-state.js';
import type { ConfigRuntime } from '../answer/config-runtime.js';
import type { Clock } from '../clock.js';
import type { RouteTable } from '../control/admin-api.js';
import type { ControlPlane } from '../control/control-plane.js';
import type { Logger } from '../logger.js';
import type { LimitGate, StoreLimitGate } from '../pipeline/limits.js';
import type { UsageStore } from '../state/usage-store.js';
import type { KeyLimits } from '../pipeline/key-limits.js';
import { stubCalls, type StubCalls } from './calls.js';
import { createStubOperations, type StubChange, type StubOperations } from './operations.js';
import { stubRoutes } from './routes.js';
import { createStubStore, type StubStore } from './store.js';

export type { StubCalls, StubHandle, StubOptions } from './calls.js';
export type { StubInfo, StubCreated } from './store.js';
export type { StubIssue } from './validate.js';
export { StubInvalidError } from './stub-error.js';
export type { StubChange } from './operations.js';

/** The run-time stubs of one server: the store the request path asks, the admin routes and the calls. */
export interface Stubs {
  /** The "stub match" step's store (and `reset`'s part `stubs`). */
  readonly store: StubStore;
  /** The admin routes, once the control plane (which reports usage) exists. */
  routes(plane: ControlPlane): RouteTable[];
  /** The programmatic calls; available once `routes` was called. */
  calls(): StubCalls;
  /** Stops taking part in `serve --workers`' stub registry. */
  close(): void;
}

export interface StubsOptions {
  runtime: ConfigRuntime;
  answers: AnswerState;
  logger: Logger;
  limits: LimitGate | StoreLimitGate;
  usage: UsageStore;
  /** The keys of `keys:`, for `POST /__mockapi/usage` with a `key`. */
  keyLimits?: KeyLimits;
  clock: Clock;
  /** In a worker of `serve --workers`: every worker serves every stub, `times` counted by the primary (stub-hub.ts). */
  worker?: boolean;
  /**
   * Where the stubs are shared beyond this process, in place of the workers' primary: a fleet's
   * Redis (src/fleet/). `apply` makes another process's change here; `store` is this process's.
   */
  share?(apply: (change: StubChange) => Promise<void>, store: StubStore): StubShare;
}

/** Where stubs are shared beyond this process: serve --workers' primary (stub-hub.ts), or a fleet's Redis (src/fleet/). */
export interface StubShare {
  /** Applies a change everywhere else; resolves once done (or once the others could not be reached). */
  replicate(change: StubChange): Promise<void>;
  /** Takes one answer of a stub with `times`: the count left after it, or null when none was left. */
  claim(id: string, remaining: number): Promise<number | null>;
  /** The remaining counts of the stubs with `times`, as the owner of the counts keeps them. */
  counts(): Promise<Map<string, number>>;
  close(): void;
}

/** Builds the stubs of a server: they follow reloads (recompiled for the new config) and are kept by them. */
export async function createStubs(options: StubsOptions): Promise<Stubs> {
  const { runtime, answers, logger } = options;
  // Loaded only in a worker: a single process never uses the channel to a primary.
  let hub: StubShare | undefined = options.share === undefined && options.worker ? (await import('./stub-hub.js')).joinStubHub((change) => apply(change)) : undefined;
  const claim = (id: string, remaining: number): Promise<number | null> => (hub as StubShare).claim(id, remaining);
  const store = createStubStore({ holder: runtime.holder, logger, forget: (key) => answers.forget(key), ...(hub === undefined && options.share === undefined ? {} : { claim }) });
  hub ??= options.share?.((change) => apply(change), store);
  runtime.onSwap((_prev, next) => void store.follow(next));
  let ops: StubOperations | undefined;

  async function apply(change: StubChange): Promise<void> {
    if (change.op === 'stub-add') await store.adopt(change.record);
    else if (change.op === 'stub-remove') store.remove(change.id);
    else store.clear();
  }

  return {
    store,
    routes(plane) {
      ops = createStubOperations({ store, limits: options.limits, usage: options.usage, keyLimits: options.keyLimits, config: () => runtime.holder.current.config, clock: options.clock, report: () => plane.usage(), replicate: hub?.replicate, counts: hub?.counts });
      return [stubRoutes(ops, runtime.holder)];
    },
    calls() {
      if (ops === undefined) throw new Error('the stubs are not started');
      return stubCalls(ops);
    },
    close: () => hub?.close(),
  };
}
