import type { AnswerState } from '../answer/answer-state.js';
import type { ConfigRuntime } from '../answer/config-runtime.js';
import type { Clock } from '../clock.js';
import type { RouteTable } from '../control/admin-api.js';
import type { ControlPlane, UsageReport } from '../control/control-plane.js';
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
  /** The "stub match" step's store of the default session (and its `reset`'s part `stubs`). */
  readonly store: StubStore;
  /** A named session's store, undefined until it has had a stub (the "stub match" step of its requests). */
  sessionStore(id: string): StubStore | undefined;
  /** Removes a named session's stubs (its `reset`, part `stubs`); returns how many there were. */
  clearSession(id: string): number;
  /** Forgets a dropped session's stubs. */
  dropSession(id: string): void;
  /** Makes a named session's store now (on a fleet: before the session's first request, so it takes the fleet's stubs). */
  openSession(id: string): void;
  /** The admin routes, once the control plane (which reports usage) exists. */
  routes(plane: ControlPlane): RouteTable[];
  /** The programmatic calls; available once `routes` was called. */
  calls(): StubCalls;
  /** Stops taking part in `serve --workers`' stub registry. */
  close(): void;
}

/** What a named session's stubs are made over: its own counters, limits and clock (src/sessions). */
export interface StubSession {
  answers: Pick<AnswerState, 'forget'>;
  limits: LimitGate | StoreLimitGate;
  usage: UsageStore;
  keyLimits?: KeyLimits;
  clock: Clock;
  /** Its usage report (`POST /__mockapi/usage` answers it). */
  report(): UsageReport | Promise<UsageReport>;
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
   * The parts of a named session, by id (src/sessions): its stubs live with it, answer only its
   * requests, and are counted on its limits. Its stubs are the worker's own (not shared through the
   * primary): a session's requests reach the worker that holds it.
   */
  session?(id: string): StubSession;
  /**
   * Where the stubs are shared beyond this process, in place of the workers' primary: a fleet's
   * Redis (src/fleet/). `apply` makes another process's change here; `store` is this process's.
   */
  share?(apply: (change: StubChange) => Promise<void>, store: StubStore): StubShare;
  /** The same for a named session's stubs (a fleet's, src/fleet/scope.ts): the session's stubs are every host's. */
  sessionShare?(id: string): (apply: (change: StubChange) => Promise<void>, store: StubStore) => StubShare;
  /** Folders beside the config's own that a stub's `bodyFile` may lead to through a link. */
  linkedFolders?: readonly string[];
}

/** Where stubs are shared beyond this process: serve --workers' primary (stub-hub.ts), or a fleet's Redis (src/fleet/). */
export interface StubShare {
  /** Applies a change everywhere else; resolves once done (or once the others could not be reached). */
  replicate(change: StubChange): Promise<void>;
  /** Takes one answer of a stub with `times`: the count left after it, or null when none was left. */
  claim(id: string, remaining: number): Promise<number | null>;
  /** The remaining counts of the stubs with `times`, as the owner of the counts keeps them. */
  counts(): Promise<Map<string, number>>;
  /** Counts an answer of a stub without `times` where the hits are kept (a fleet's; `claim` counts the others'). */
  hit?(id: string): void;
  /** The hits kept there, by stub id (a stub missing: this process's own count shows). */
  hits?(): Promise<Map<string, number>>;
  close(): void;
}

/** Builds the stubs of a server: they follow reloads (recompiled for the new config) and are kept by them. */
export async function createStubs(options: StubsOptions): Promise<Stubs> {
  const { runtime, answers, logger } = options;
  // Loaded only in a worker: a single process never uses the channel to a primary.
  let hub: StubShare | undefined =
    options.share === undefined && options.worker
      ? (await import('./stub-hub.js')).joinStubHub((change) => apply(change))
      : undefined;
  const claim = (id: string, remaining: number): Promise<number | null> => (hub as StubShare).claim(id, remaining);
  const store = createStubStore({
    holder: runtime.holder,
    parts: runtime.parts,
    logger,
    forget: (key) => answers.forget(key),
    ...(options.linkedFolders === undefined ? {} : { linkedFolders: options.linkedFolders }),
    ...(hub === undefined && options.share === undefined ? {} : { claim }),
    ...(options.share === undefined ? {} : { hit: (id: string) => hub?.hit?.(id) }),
  });
  hub ??= options.share?.((change) => apply(change), store);
  // Named sessions' stubs, each made on the session's first stub call (on a fleet: when the session is first used here, shared).
  const sessions = new Map<string, { store: StubStore; ops: StubOperations; share: StubShare | undefined }>();
  runtime.onSwap((_prev, next) => {
    void store.follow(next);
    for (const session of sessions.values()) void session.store.follow(next);
  });
  let ops: StubOperations | undefined;

  function sessionStubs(id: string): { store: StubStore; ops: StubOperations } {
    let made = sessions.get(id);
    if (made !== undefined) return made;
    if (options.session === undefined)
      throw new Error('the stubs of a named session were asked for, but the server has no sessions');
    const parts = options.session(id);
    const shareOf = options.sessionShare?.(id);
    let share: StubShare | undefined;
    const own = createStubStore({
      holder: runtime.holder,
      parts: runtime.parts,
      logger,
      forget: (key) => parts.answers.forget(key),
      ...(options.linkedFolders === undefined ? {} : { linkedFolders: options.linkedFolders }),
      ...(shareOf === undefined
        ? {}
        : {
            claim: (stub: string, left: number) => (share as StubShare).claim(stub, left),
            hit: (stub: string) => share?.hit?.(stub),
          }),
    });
    share = shareOf?.((change) => applyTo(own, change), own);
    const ownOps = createStubOperations({
      store: own,
      limits: parts.limits,
      usage: parts.usage,
      keyLimits: parts.keyLimits,
      config: () => runtime.holder.current.config,
      clock: parts.clock,
      report: () => parts.report(),
      replicate: share?.replicate,
      counts: share?.counts,
      hits: share?.hits,
    });
    made = { store: own, ops: ownOps, share };
    sessions.set(id, made);
    return made;
  }

  async function applyTo(target: StubStore, change: StubChange): Promise<void> {
    if (change.op === 'stub-add') await target.adopt(change.record);
    else if (change.op === 'stub-remove') target.remove(change.id);
    else target.clear();
  }
  const apply = (change: StubChange): Promise<void> => applyTo(store, change);

  return {
    store,
    sessionStore: (id) => sessions.get(id)?.store,
    clearSession: (id) => sessions.get(id)?.store.clear() ?? 0,
    dropSession(id) {
      sessions.get(id)?.share?.close();
      sessions.delete(id);
    },
    openSession: (id) => void sessionStubs(id),
    routes(plane) {
      const own = createStubOperations({
        store,
        limits: options.limits,
        usage: options.usage,
        keyLimits: options.keyLimits,
        config: () => runtime.holder.current.config,
        clock: options.clock,
        report: () => plane.usage(),
        replicate: hub?.replicate,
        counts: hub?.counts,
        hits: hub?.hits,
      });
      ops = own;
      return [stubRoutes((session) => (session.id === '' ? own : sessionStubs(session.id).ops), runtime.holder)];
    },
    calls() {
      if (ops === undefined) throw new Error('the stubs are not started');
      return stubCalls(ops, () => runtime.holder.current.config.server.maxBodySize);
    },
    close: () => hub?.close(),
  };
}
