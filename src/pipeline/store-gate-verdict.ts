/**
 * The store's answer read as a verdict: the numbers the limit script replies (outcome, window,
 * meters) turned into a LimitVerdict, the 503 verdict of a store that cannot be reached, and
 * whether a request has anything for the store to decide at all.
 */
import type { LimitsConfig } from '../config/types.js';
import type { AdmitReply, EndpointWindow } from '../state/redis-store.js';
import type { LimitVerdict } from './limits.js';
import type { MeterStatus, Reserves } from './meters.js';

/** Retry-After of that 503: the store is retried at least once a second. */
export const STORE_UNAVAILABLE: LimitVerdict = { outcome: 'store_unavailable', rate: undefined, retryAfterSeconds: 1 };
/** Whether limits hold anything to decide: a rate window, a monthly quota or a meter. */
export function limitsDecide(limits: LimitsConfig): boolean {
  return limits.rateLimit !== undefined || limits.monthlyQuota !== undefined || (limits.meters?.length ?? 0) > 0;
}

/**
 * Whether a request has anything for the store to decide: its key's limits, its endpoint's own
 * window, or a reserve on a meter. One with nothing is admitted whatever `limits.storeDown` says:
 * only the month's count is kept, in the store or, while it is away, here until it is back.
 */
export function requestDecides(
  limits: LimitsConfig,
  endpoint: EndpointWindow | undefined,
  reserves: Reserves | undefined,
): boolean {
  return endpoint !== undefined || reserves !== undefined || limitsDecide(limits);
}

/**
 * What mock requests get while the store is away, for the line said when it goes: under `closed`,
 * a 503 where there is a limit to decide; `limited` is false while none of the config's limits
 * has been seen to decide anything (see `StoreGateOptions.limited`).
 */
export function whileAway(policy: 'closed' | 'open', limited: boolean): string {
  if (policy === 'open')
    return "admitting requests under this server's own limits and counting them locally (limits.storeDown: open)";
  if (!limited)
    return 'with no limit to decide (limits.storeDown has nothing to apply to), mock requests are admitted and counted locally';
  return 'mock requests with a limit get 503 store_unavailable (limits.storeDown: closed) and those without one are admitted and counted locally';
}

/** The script's outcomes: 3 (a meter's window), 4 (a reserve that can never fit) and 5 (a spent meter) are a meter's. */
const OUTCOMES = [
  'admitted',
  'rate_limited',
  'quota_exceeded',
  'rate_limited',
  'rate_limited',
  'quota_exceeded',
] as const;
const WHY = ['window', 'never', 'exhausted'] as const;

export function toVerdict(reply: AdmitReply, limits: LimitsConfig, reserves: Reserves | undefined): LimitVerdict {
  const [outcome, limit, remaining, resetSeconds, retryAfterSeconds] = reply;
  const verdict: LimitVerdict = {
    outcome: OUTCOMES[outcome] ?? 'admitted',
    rate: limit === 0 ? undefined : { limit, remaining, resetSeconds },
    retryAfterSeconds,
  };
  const meters = limits.meters;
  // (An audited store answers through the metered script even without meters: the same first five numbers.)
  if (meters === undefined) return verdict;
  const statuses: MeterStatus[] = meters.map((meter, i) => ({
    meter,
    used: Number(reply[7 + 2 * i]),
    resetMs: Number(reply[8 + 2 * i]),
  }));
  verdict.meters = statuses;
  if (outcome >= 3) {
    const index = Number(reply[5]) - 1;
    const status = statuses[index]!;
    verdict.meter = {
      meter: status.meter,
      why: WHY[outcome - 3]!,
      used: status.used,
      requested: reserves?.[index] ?? 0,
      retryAfterMs: Number(reply[6]),
    };
  } else if (outcome === 0 && reserves !== undefined) {
    verdict.settle = { at: reply.countedAt ?? 0, month: reply.month ?? '', meters, reserves };
  }
  return verdict;
}
