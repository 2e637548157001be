import type { ConfigRuntime } from '../answer/config-runtime.js';
import type { ClientTracker } from './early-retries.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { LimitGate, StoreLimitGate } from '../pipeline/limits.js';
import type { UsageStore } from '../state/usage-store.js';
import type { KeyLimits } from '../pipeline/key-limits.js';
import { createAdminApi, type AdminApi, type RouteTable, type SessionLookup } from './admin-api.js';
import { adminTokenProblem, generateAdminToken, isLoopbackHost } from './admin-guard.js';
import type { AnswerState } from './answer-state.js';
import { controlCalls, type ControlCalls } from './calls.js';
import { createControlPlane, type ControlPlane, type ControlPlaneDeps } from './control-plane.js';
import type { WorkersLink } from './other-workers.js';
import type { FleetLink } from './fleet-link.js';
import { createJournal, type Journal } from './journal.js';
import { CLOCK_RANGE_TEXT, createVirtualClock, isClockTime, parseIsoTime, type VirtualClock } from './virtual-clock.js';

export interface ControlOptions {
  /** An injected clock, or where a virtual clock starts (an ISO time or a Date). */
  clock: Clock | string | Date;
  /** `server.journal`. */
  journal: number;
  bindHost: string;
  adminToken: string | undefined;
  /** In a `serve --workers` worker: the hub through which the journal and the admin API cover every worker. */
  hub?: WorkersLink;
  /** On a host of a fleet (src/fleet/): the journal and the admin API cover every host; it takes the hub's place. */
  fleet?: FleetLink;
}

/** The control plane's parts: the journal and clock first (the limits read the clock), then `start` over the limits, before the handler is built. */
export interface Control {
  /** The clock everything reads: the virtual one when asked for. */
  readonly clock: Clock;
  /** Where the virtual clock started (`--clock`), ms since the epoch; undefined without one. */
  readonly virtualStart: number | undefined;
  readonly journal: Journal;
  /** The admin API, once started. */
  readonly admin: AdminApi;
  readonly adminToken: string | undefined;
  /** The virtual clock, when the server was started with one (a fleet moves it when another host does). */
  readonly virtualClock: VirtualClock | undefined;
  /** Calls `listener` whenever the virtual clock is moved (set, advance, reset); never for an injected clock. */
  onClockMove(listener: () => void): () => void;
  /** Builds the control plane over the server's parts; returns the calls of the server's object. */
  start(parts: ControlParts): ControlCalls;
}

/** The server's parts the control plane works over; `routes` are the admin routes of capabilities (stubs…). */
export interface ControlParts {
  runtime: ConfigRuntime;
  limits: LimitGate | StoreLimitGate;
  usage: UsageStore;
  keyLimits?: KeyLimits;
  logger: Logger;
  answers: AnswerState;
  clients: ClientTracker;
  futile?: { forget(): void };
  stubs?: { clear(): number };
  resources?: ControlPlaneDeps['resources'];
  routes?: (plane: ControlPlane) => RouteTable[];
  /** Named sessions (src/sessions): how an admin call finds the one it names. */
  sessions?: SessionLookup;
  /** Aborts when the server stops: the calls' waits still pending end then, as the admin API's do. */
  stopping?: AbortSignal;
}

/** Builds the journal, the clock and the admin API of a server. Throws a TypeError for a clock that is not an ISO time or an empty (or unsendable) admin token, a RangeError for one outside the virtual clock's range. */
export function createControl(options: ControlOptions): Control {
  const tokenProblem = options.adminToken === undefined ? undefined : adminTokenProblem(options.adminToken);
  if (tokenProblem !== undefined)
    throw new TypeError(`adminToken ${tokenProblem}, got ${JSON.stringify(options.adminToken)}`);
  let virtualClock: VirtualClock | undefined;
  let virtualStart: number | undefined;
  if (typeof options.clock !== 'function') {
    const start = options.clock instanceof Date ? options.clock.getTime() : parseIsoTime(options.clock);
    if (start === undefined || !Number.isFinite(start))
      throw new TypeError(
        `clock must be an ISO time such as 2026-11-30T23:59:59Z, got ${JSON.stringify(options.clock)}`,
      );
    if (!isClockTime(start))
      throw new RangeError(`clock must be a time ${CLOCK_RANGE_TEXT}, got ${JSON.stringify(options.clock)}`);
    virtualClock = createVirtualClock(start);
    virtualStart = start;
  }
  const clock = virtualClock?.now ?? (options.clock as Clock);
  // A fleet's link answers for every host: it takes the place of the workers' hub.
  const link = options.fleet ?? options.hub;
  const journal = createJournal(options.journal, clock, link?.ids.next);
  const adminToken = options.adminToken ?? (isLoopbackHost(options.bindHost) ? undefined : generateAdminToken());
  let admin: AdminApi | undefined;
  return {
    clock,
    virtualStart,
    virtualClock,
    journal,
    get admin() {
      if (admin === undefined) throw new Error('the control plane is not started');
      return admin;
    },
    adminToken,
    onClockMove: (listener) => virtualClock?.onMove(listener) ?? (() => {}),
    start({ routes, sessions, stopping, ...parts }) {
      const plane = createControlPlane({
        journal,
        clock,
        virtualClock,
        ...parts,
        ...(options.fleet === undefined ? {} : { fleet: options.fleet }),
      });
      link?.attach(journal, plane);
      admin = createAdminApi(plane, { bindHost: options.bindHost, token: adminToken }, link, routes?.(plane), sessions);
      return controlCalls(plane, options.fleet, stopping);
    },
  };
}
