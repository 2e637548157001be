import type { ConfigRuntime } from '../answer/config-runtime.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { LimitGate, StoreLimitGate } from '../pipeline/limits.js';
import type { KeyLimits } from '../pipeline/key-limits.js';
import type { UsageStore } from '../state/usage-store.js';
import type { AnswerState } from './answer-state.js';
import type { AnswerOutline } from './config-outline.js';
import type { ClientReport, ClientTracker } from './early-retries.js';
import type { JournalEntry } from './journal-entry.js';
import type { MeterUsage } from './key-usage.js';
import type { Journal, RequestFilter } from './journal.js';
import type { KeyUsage } from './key-usage.js';
import type { ProjectInfo } from './project-info.js';
import type { VirtualClock } from './virtual-clock.js';
import type { WaitOptions } from './wait.js';
import type { FleetLink } from './fleet-link.js';

// The control plane's types: what its calls take and answer, and what it is built from
// (control-plane.ts builds it).
/** `GET /__mockapi/usage`. */
export interface UsageReport {
  month: string;
  requests: number;
  quota: number | null;
  remaining: number | null;
  rateLimit: { limit: number; remaining: number; resetSeconds: number } | null;
  /** Each meter of `limits.meters` by name (its window, or month, or total); absent without meters. */
  meters?: Record<string, MeterUsage>;
  /**
   * Every key's figures by name (`default` is `apiKey`, whose figures the fields above are), each
   * with its `plan`; only when the config lists `keys:`.
   */
  keys?: Record<string, KeyUsage>;
}

/** What `reset` zeroes; an absent part is reset. */
export interface ResetParts {
  journal?: boolean;
  usage?: boolean;
  rateLimit?: boolean;
  sequences?: boolean;
  scenarios?: boolean;
  /** Puts a virtual clock back where it started (`--clock`); nothing on the real clock. */
  clock?: boolean;
  /** Removes every run-time stub. */
  stubs?: boolean;
  /** Puts every resource collection back to its seed and forgets idempotency keys. */
  resources?: boolean;
}

/** The answer of `reset`: what was reset and the state that results. */
export interface ResetResult {
  reset: (keyof ResetParts)[];
  usage: UsageReport;
  scenarios: Record<string, string>;
}

/**
 * Every worker's hits, added up, for `GET /__mockapi/endpoints`: requests per endpoint (endpoint key →
 * count) and, where known, per answer (endpoint key → answer name → count; else this journal's).
 */
export interface EndpointCounts {
  endpoints: ReadonlyMap<string, number>;
  answers?: ReadonlyMap<string, ReadonlyMap<string, number>>;
}

/** One endpoint in `GET /__mockapi/endpoints`. */
export interface EndpointInfo {
  endpoint: string;
  method: string;
  path: string;
  answers: string[];
  requests: number;
  /** The share of requests answered with the simulated 500 (`failRate`, 0 to 1; 0 when none). */
  failRate: number;
  /** Each answer's status, `when`, weight and hits, for the inspector's Endpoints view. */
  answerDetails: AnswerOutline[];
}

/** An event of `GET /__mockapi/events`. */
export type ControlEvent =
  | { type: 'request'; data: JournalEntry }
  | { type: 'reload'; data: { revision: string; endpoints: number } }
  | { type: 'usage'; data: UsageReport }
  | { type: 'webhook'; data: unknown };

/** The clock calls; they reject with a 409 {@link ControlError} on a server without a virtual clock. */
export interface ClockControl {
  now(): Promise<{ now: string }>;
  set(time: string | number | Date): Promise<{ now: string }>;
  advance(by: string | number): Promise<{ now: string }>;
}

/**
 * The control plane's functions. The programmatic API (`startMockServer`'s object), the
 * admin API (a thin HTTP layer over these) and `connectMockServer` (the same calls over HTTP) all
 * give the same answers. Failures are {@link ControlError}s with the admin API's status and code.
 */
export interface ControlPlane {
  requests(filter?: RequestFilter): JournalEntry[];
  countRequests(filter?: RequestFilter): number;
  /** Resolves with the matching requests once `count` of them exist; rejects with a `WaitTimeoutError`. */
  waitForRequests(filter?: RequestFilter, options?: WaitOptions, signal?: AbortSignal): Promise<JournalEntry[]>;
  clearRequests(): void;
  /** Synchronous in process; a round trip to the store (at most its command timeout) with one. */
  usage(): UsageReport | Promise<UsageReport>;
  /**
   * With a shared store: whether it answered its last command (after `usage()`, that
   * read: when it did not, `usage()` gave this server's last known figures); undefined without a
   * store. The admin API sends it as `X-Mockapi-Store`, outside the documented usage body.
   */
  storeReachable(): boolean | undefined;
  /**
   * With a store, resolves once Redis applied the usage and rate-window parts, or rejects with a 503
   * `store_unavailable` {@link ControlError} having reset nothing else.
   */
  reset(parts?: ResetParts): ResetResult | Promise<ResetResult>;
  /**
   * A reset another `serve --workers` worker took (it reset the shared store): this process's parts
   * only. Returns the parts reset.
   */
  resetHere(parts?: ResetParts): (keyof ResetParts)[];
  /**
   * As {@link resetHere}, for a `serve --workers` worker without a store: the month in the state
   * files is not reset here but taken from them, as the worker that took the call wrote it
   * ({@link writeReset}); resolves once taken.
   */
  followReset(parts?: ResetParts): Promise<(keyof ResetParts)[]>;
  /** Writes the month a reset zeroed to the state files now (before the other workers follow it). */
  writeReset(): Promise<void>;
  /** As `mockapi rotate-key` on the served file; resolves once this server serves the new key. */
  /** `name`: a key of `keys:` (default: `apiKey`, the key named `default`). */
  rotateKey(key?: string, name?: string): Promise<{ key: string }>;
  scenarios(): Record<string, string>;
  setScenario(name: string, state: string): Record<string, string>;
  readonly clock: ClockControl;
  /** With `counts`, the requests per endpoint (and per answer) given (every worker's, in a `serve --workers` worker) instead of this journal's. */
  endpoints(counts?: EndpointCounts): EndpointInfo[];
  /** The clients given a Retry-After and how many came back early. */
  clients(): ClientReport[];
  /** The project and its key masked (the key itself only when `reveal`), and the states each scenario is known to take. */
  project(reveal: boolean): ProjectInfo & { scenarioStates: Record<string, string[]> };
  /** Calls `listener` with every event from now on; returns the unsubscribe function. */
  subscribe(listener: (event: ControlEvent) => void): () => void;
  /** Tells every subscriber of an event another part made (a webhook delivery). */
  publish(event: ControlEvent): void;
}

export interface ControlPlaneDeps {
  journal: Journal;
  runtime: ConfigRuntime;
  limits: LimitGate | StoreLimitGate;
  usage: UsageStore;
  /** The keys of `keys:` and the endpoint windows (usage, reset). */
  keyLimits?: KeyLimits;
  clock: Clock;
  /** Set when the server was started with a virtual clock. */
  virtualClock: VirtualClock | undefined;
  answers: AnswerState;
  /** Retry-After given per client (early retries). */
  clients: ClientTracker;
  /** Futile retries remembered in this plane's session: a reset of its usage forgets them. */
  futile?: { forget(): void };
  logger: Logger;
  /** The run-time stubs, which `reset` removes (part `stubs`). */
  stubs?: { clear(): number };
  /**
   * The resources, which `reset` puts back to their seed (part `resources`; `cleared` runs between
   * emptying and seeding, and a store out of reach rejects with a 503 {@link ControlError});
   * `forget` drops what this process keeps of a shared store.
   */
  resources?: { reset(cleared?: () => void): Promise<void>; forget(): void; active(): boolean };
  /** On a host of a fleet: the other hosts follow its clock moves and key rotations; its event stream hears every host. */
  fleet?: Pick<FleetLink, 'hearsAll' | 'clockMoved' | 'keyRotated'>;
}
