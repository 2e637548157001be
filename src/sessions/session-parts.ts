import { createAnswerState, type AnswerState } from '../answer/answer-state.js';
import type { ConfigRuntime } from '../answer/config-runtime.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/types.js';
import { createControlPlane, type ControlPlane } from '../control/control-plane.js';
import type { ControlEvent, ControlPlaneDeps } from '../control/control-types.js';
import type { ClientTracker } from '../control/early-retries.js';
import { createJournal } from '../control/journal.js';
import { createVirtualClock, type VirtualClock } from '../control/virtual-clock.js';
import type { RequestScope } from '../http/scope.js';
import type { Logger } from '../logger.js';
import type { KeyMatcher } from '../pipeline/auth.js';
import { createKeyLimits, type KeyLimits } from '../pipeline/key-limits.js';
import { withMonthStatus } from '../pipeline/limit-headers.js';
import { createGate, createLimitGate, type LimitGate, type StoreLimitGate } from '../pipeline/limits.js';
import type { FleetLink } from '../control/fleet-link.js';
import { MonthCount } from '../state/month-count.js';
import type { UsageStore } from '../state/usage-store.js';

/** What every named session shares with the server: the config, the clients seen, where it logs, and how its own parts are made. */
export interface SharedParts {
  runtime: ConfigRuntime;
  logger: Logger;
  clients: ClientTracker;
  /** The server's clock: a named session reads it too, unless the server has a virtual clock. */
  clock: Clock;
  /** Where the server's virtual clock started (`--clock`): each session's own virtual clock starts there. */
  virtualStart: number | undefined;
  /** Removes a session's run-time stubs (its `reset`, part `stubs`); returns how many there were. */
  clearStubs(id: string): number;
  /** A session's resources (its `reset`, part `resources`): back to their seed, or forgotten here. */
  resources?: { reset(id: string, cleared?: () => void): Promise<void>; forget(id: string): void; active(): boolean };
  /** Told when a session's own virtual clock moved (what runs on it: resource lifecycles). */
  clockMoved?(id: string): void;
  /** Futile retries of spent budgets, remembered per session: a session's reset of its usage forgets its own. */
  futile?: { forget(scope: string): void };
  /** On a host of a fleet: what the fleet shares of a named session (src/fleet/scope.ts), and where its limits are counted. */
  fleet?: SessionFleet;
}

/** A fleet's part in a named session: its journal, stubs, scenario states and clock across hosts, its limits in the fleet's Redis. */
export interface SessionFleet {
  share(id: string): {
    readonly link: FleetLink;
    scenarios(answers: AnswerState): AnswerState;
    join(virtualClock: VirtualClock | undefined): Promise<unknown>;
  };
  /** Makes what other capabilities keep of the session before it takes the fleet's state (its stub store). */
  prepare(id: string): void;
  /** The limits' store (`{mockapi:<project>}:s:<id>:…`), as the server's own limits use it. */
  store: { url: string; project: string; storeDown: 'closed' | 'open' | undefined };
}

/**
 * A named session's own parts: the request path reads them as `x.scope`, its admin calls through
 * its control plane. An idle session that answered a request holds a journal of the entries it
 * made, its counters and its windows; its control plane is made on its first admin call. What a
 * capability keeps per session (stubs, resources) it keeps itself, by the session's id.
 */
export interface SessionParts extends RequestScope {
  readonly usage: UsageStore;
  readonly virtualClock: VirtualClock | undefined;
  /** Its control plane (journal, usage, reset, scenarios, clock), made on first use. */
  readonly plane: ControlPlane;
  /** Tells its event streams of an event another part made (a webhook delivery); nothing before its control plane is made (no stream is open then). */
  publish(event: ControlEvent): void;
  /** Follows a newly served config (the journal's size, scenarios, endpoints). */
  follow(prev: Config, next: Config): void;
  /** On a fleet: the control plane's link across hosts (the admin API reads the journal through it). */
  readonly link: FleetLink | undefined;
  /** On a fleet: settles once the session's shared parts are taken (its limits' store opened, its clock, stubs and states read); undefined once settled, or without a fleet. */
  readonly ready: Promise<void> | undefined;
  /** Drops what it holds. */
  close(): void;
}

/** Makes a named session's parts: in memory, whatever the server keeps its own counts in (a state file, a shared store); on a fleet, shared. */
export function createSessionParts(id: string, shared: SharedParts, key: KeyMatcher | undefined): SessionParts {
  const config = shared.runtime.holder.current.config;
  const virtualClock = shared.virtualStart === undefined ? undefined : createVirtualClock(shared.virtualStart);
  if (shared.clockMoved !== undefined) virtualClock?.onMove(() => shared.clockMoved!(id));
  const clock = virtualClock?.now ?? shared.clock;
  const share = shared.fleet?.share(id);
  const journal = createJournal(config.server.journal, clock, share?.link.ids.next);
  const usage = new MonthCount();
  let limits: LimitGate | StoreLimitGate = withMonthStatus(createGate(usage), (now) => usage.count(now));
  // Made when first asked for: a session of a config without dynamic answers, scenarios, `keys:` or
  // endpoint limits never needs them.
  let answers: AnswerState | undefined;
  let keyLimits: KeyLimits | undefined;
  const answersOf = (): AnswerState => {
    if (answers !== undefined) return answers;
    const own = createAnswerState(shared.runtime.holder.current.config);
    answers = share === undefined ? own : share.scenarios(own);
    return answers;
  };
  const fleetStore = shared.fleet?.store;
  // A session's limits in the fleet's store say nothing of the store coming and going: the server's own limits do, once.
  const limitPlace = {
    state: false as const,
    clock,
    logger: fleetStore === undefined ? shared.logger : quietStore(shared.logger),
  };
  const keyLimitsOf = (): KeyLimits =>
    (keyLimits ??= createKeyLimits(
      fleetStore === undefined ? limitPlace : { ...limitPlace, ...storePlace(fleetStore), session: id },
    ));
  // The control plane's own reload listeners: called by `follow`, dropped with the session.
  const swaps: ((prev: Config, next: Config) => void)[] = [];
  let plane: ControlPlane | undefined;
  let closeLimits: (() => Promise<void>) | undefined;
  let closed = false;
  let ready: Promise<void> | undefined;
  const attachPlane = (): void => void parts.plane;
  if (share !== undefined && fleetStore !== undefined) {
    answersOf(); // its scenario states are the fleet's from the start
    ready = (async () => {
      const handle = await createLimitGate({ ...limitPlace, ...storePlace(fleetStore), session: id });
      if (closed) return void (await handle.close());
      limits = handle.gate;
      closeLimits = () => handle.close();
      shared.fleet?.prepare(id);
      await share.join(virtualClock);
      // Its journal goes to the session's stream from the first entry: the control plane (which
      // attaches it) is made now, over the limits just opened.
      if (!closed) attachPlane();
    })()
      .catch((err: Error) =>
        shared.logger.warn(shared.runtime.holder.current.redactor.scrub(`fleet: session ${id}: ${err.message}`)),
      )
      .finally(() => (ready = undefined));
  }

  const parts: SessionParts = {
    id,
    journal,
    clock,
    get answers() {
      return answersOf();
    },
    get limits() {
      return limits;
    },
    get keyLimits() {
      return keyLimitsOf();
    },
    key,
    usage,
    virtualClock,
    get plane() {
      plane ??= createControlPlane({
        journal,
        runtime: {
          holder: shared.runtime.holder,
          parts: shared.runtime.parts,
          get failures() {
            return shared.runtime.failures;
          },
          reload: () => shared.runtime.reload(),
          onSwap: (listener) => void swaps.push(listener),
        },
        limits,
        usage,
        keyLimits: keyLimitsOf(),
        clock,
        virtualClock,
        answers: answersOf(),
        clients: shared.clients,
        ...(shared.futile === undefined ? {} : { futile: { forget: () => shared.futile?.forget(id) } }),
        logger: shared.logger,
        stubs: { clear: () => shared.clearStubs(id) },
        ...(shared.resources === undefined ? {} : { resources: sessionResources(id, shared.resources) }),
        ...(share === undefined ? {} : { fleet: share.link }),
      });
      share?.link.attach(journal, plane);
      return plane;
    },
    publish(event) {
      plane?.publish(event);
    },
    follow(prev, next) {
      answers?.adopt(next);
      if (swaps.length === 0) journal.resize(next.server.journal); // (the control plane resizes it when it exists)
      for (const swap of swaps) swap(prev, next);
    },
    link: share?.link,
    get ready() {
      return ready;
    },
    close() {
      closed = true;
      journal.clear();
      void keyLimits?.close();
      void closeLimits?.();
    },
  };
  return parts;
}

/** `logger` without the lines of a limit store going away and coming back. */
function quietStore(logger: Logger): Logger {
  const said = (line: string): boolean => line.startsWith('limit store ');
  return {
    ...logger,
    warn: (line) => void (said(line) || logger.warn(line)),
    info: (line) => void (said(line) || logger.info(line)),
  };
}

/** Where a session's limits are counted in the fleet's store. */
function storePlace(store: SessionFleet['store']): { store: string; project: string; storeDown?: 'closed' | 'open' } {
  return {
    store: store.url,
    project: store.project,
    ...(store.storeDown === undefined ? {} : { storeDown: store.storeDown }),
  };
}

/** A session's part of the resources, for its control plane's `reset`. */
function sessionResources(
  id: string,
  resources: NonNullable<SharedParts['resources']>,
): NonNullable<ControlPlaneDeps['resources']> {
  return {
    reset: (cleared) => resources.reset(id, cleared),
    forget: () => resources.forget(id),
    active: () => resources.active(),
  };
}
