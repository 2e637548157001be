/**
 * The store's answer read as a verdict: the numbers the limit script replies (outcome, window,
 * meters) turned into a LimitVerdict, and the 503 verdict of a store that cannot be reached.
 */
import type { LimitsConfig } from '../config/types.js';
import type { AdmitReply } from '../state/redis-store.js';
import type { LimitVerdict } from './limits.js';
import type { MeterStatus, Reserves } from './meters.js';

/** Retry-After of that 503: the store is retried at least once a second. */
export const STORE_UNAVAILABLE: LimitVerdict = { outcome: 'store_unavailable', rate: undefined, retryAfterSeconds: 1 };
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
