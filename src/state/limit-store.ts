/**
 * The shared limits of one project (or one key) as the server uses them ({@link LimitStore}), the
 * options of opening one, and what its calls answer; redis-store.ts makes one over Redis.
 */
import type { LimitsConfig, MeterConfig, RateLimitConfig } from '../config/types.js';
import type { AdmitReply } from './admit-batch.js';
import type { CountTold } from './count-batch.js';
import type { SettleOne } from './settle-batch.js';

/** What the status script answers: the month and its count, then the window (`limit` 0 without a rate limit). */
export type StatusReply = [month: string, requests: number, limit: number, remaining: number, resetSeconds: number];

/** An endpoint's own window (`endpoints[].limits.rateLimit`), by its route (`GET /users/:id`). */
export interface EndpointWindow {
  route: string;
  rateLimit: RateLimitConfig;
}

/** The shared limits of one project (or one key of `keys:`) in Redis. */
export interface LimitStore {
  /** True while connected (a command may still fail). */
  readonly ready: boolean;
  /**
   * Decides and counts one request. The requests of one event-loop turn with the same limits go to
   * Redis as one script call (see state/admit-batch.ts). Rejects when Redis cannot be reached (or refuses the script).
   * A command that got no answer in time may still run in Redis afterwards (a Redis that hung and
   * resumes): its reply, when it comes after all, goes to `late` instead. With `endpoint`, the
   * endpoint's window is checked and counted in the same script call, before the key's window.
   */
  admit(
    limits: LimitsConfig,
    late?: (reply: AdmitReply) => void,
    endpoint?: EndpointWindow,
    reserves?: readonly number[],
  ): Promise<AdmitReply>;
  /**
   * Counts one request in this month that has nothing to decide (no rate limit, quota, meter or
   * endpoint window), with nothing to wait for: the request is admitted now. The count joins this
   * turn's count call when nothing was sent after it, else opens one, handed to the client at once
   * (so it is written before the answers of the turn, which wait for its end). `told` hears once per
   * call how many it carried: `counted`; `failed` (not counted: the caller keeps them); or `late`,
   * counted by Redis after all, after the call had failed as unanswered (a Redis that hung). False
   * when this store decides every admission (an audit records each): admit then.
   */
  count(told: CountTold): boolean;
  /** Corrects admissions of `meters` (settles of one turn go in one script call). */
  settle(meters: readonly MeterConfig[], one: SettleOne): Promise<void>;
  /** Each of `meters` as the next request would find it (`used, resetMs` each), and the month. */
  meterStatus(meters: readonly MeterConfig[]): Promise<{ used: number[]; resetMs: number[]; month: string }>;
  /** Sets one meter's window, month or total. */
  setMeter(meter: MeterConfig, units: number): Promise<void>;
  /** Empties the meters' windows and/or their months and totals, every meter this key counted in. */
  resetMeters(windows: boolean, counts: boolean): Promise<void>;
  /** This month (UTC, by Redis's clock) and what every server counted in it. */
  usage(): Promise<{ month: string; requests: number }>;
  /** {@link usage} and the shared window as the next request would find it, counting nothing. */
  status(limits: LimitsConfig): Promise<StatusReply>;
  /** Zeroes this month for every server; resolves to what was counted before. */
  resetUsage(): Promise<{ month: string; requests: number }>;
  /** Empties the shared rate window and every endpoint window of this key (the month's count stays). */
  resetWindow(): Promise<void>;
  /**
   * Adds `n` requests counted elsewhere (locally, while the store was down) to `month` (`''`: this
   * month by Redis's clock); a negative `n` takes back requests it counted that were answered without it.
   */
  addUsage(month: string, n: number): Promise<void>;
  /** Disconnects; pending commands finish first. */
  close(): Promise<void>;
}

export interface LimitStoreOptions {
  /** `redis://[user:pass@]host:port/db`, `rediss://…` or `unix:///path/to/socket?db=n`. */
  url: string;
  project: string;
  /** The name of a key of `keys:` whose limits these are; absent for `apiKey`'s (the project's own). */
  keyName?: string;
  /**
   * A named session of a fleet whose limits these are (`{mockapi:<project>}:s:<id>:…`); absent for
   * the default session's. The sessions' stores of one URL share one connection (see leaseClient in redis-client.ts).
   */
  session?: string;
  /** Called when the connection is lost or a command fails (`reason`), and when it is ready again. */
  onDown?: (reason: string) => void;
  onUp?: () => void;
  /** Longest wait for a reply before the store counts as unreachable. Default 3000 ms. */
  commandTimeoutMs?: number;
  /** Longest wait for the first connection before `openLimitStore` resolves anyway (down). Default 2000 ms. */
  connectWaitMs?: number;
  /**
   * Keep the last `auditCap` admissions and settles in the key's audit list (see
   * METERED_ADMIT_SCRIPT), for tests that prove the limits exact. Default: `MOCKAPI_LIMIT_AUDIT`, else 0 (none).
   */
  auditCap?: number;
}
