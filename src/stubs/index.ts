import type { AnswerState } from '../answer/answer-state.js';
import type { ConfigRuntime } from '../answer/config-runtime.js';
import type { Clock } from '../clock.js';
import type { RouteTable } from '../control/admin-api.js';
import type { ControlPlane } from '../control/control-plane.js';
import type { Logger } from '../logger.js';
import type { LimitGate, StoreLimitGate } from '../pipeline/limits.js';
import type { UsageStore } from '../state/usage-store.js';
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
  /** Applies a change another worker made (`serve --workers`). */
  apply(change: StubChange): Promise<void>;
}

export interface StubsOptions {
  runtime: ConfigRuntime;
  answers: AnswerState;
  logger: Logger;
  limits: LimitGate | StoreLimitGate;
  usage: UsageStore;
  clock: Clock;
  /** Applies a change on every other worker of `serve --workers`. */
  replicate?(change: StubChange): Promise<void>;
}

/** Builds the stubs of a server: they follow reloads (recompiled for the new config) and are kept by them. */
export function createStubs(options: StubsOptions): Stubs {
  const { runtime, answers, logger } = options;
  const store = createStubStore({ holder: runtime.holder, logger, forget: (key) => answers.forget(key) });
  runtime.onSwap((_prev, next) => void store.follow(next));
  let ops: StubOperations | undefined;
  return {
    store,
    routes(plane) {
      ops = createStubOperations({ store, limits: options.limits, usage: options.usage, clock: options.clock, report: () => plane.usage(), replicate: options.replicate });
      return [stubRoutes(ops, runtime.holder)];
    },
    calls() {
      if (ops === undefined) throw new Error('the stubs are not started');
      return stubCalls(ops);
    },
    async apply(change) {
      if (change.op === 'stub-add') await store.adopt(change.record);
      else if (change.op === 'stub-remove') store.remove(change.id);
      else store.clear();
    },
  };
}
