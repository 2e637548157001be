import type { LimitsConfig } from '../config/types.js';

/** Outcome of the rate-limit and quota steps (SPEC §3 steps 2 and 3), with the headers to send. */
export interface LimitVerdict {
  outcome: 'admitted' | 'rate_limited' | 'quota_exceeded';
  /** Flat `[name, value, …]`: RateLimit-* when a rate limit is set, Retry-After on a 429. */
  headers: string[];
}

/**
 * The rate-limit and quota steps together: decides and, only when admitted, counts the request.
 * Created once per server; its counters live outside the config so they survive reloads.
 */
export interface LimitGate {
  admit(limits: LimitsConfig, now: number): LimitVerdict;
}

const ADMITTED: LimitVerdict = { outcome: 'admitted', headers: [] };

/** A gate that admits everything; used until the limits are wired in. */
export function createOpenGate(): LimitGate {
  return { admit: () => ADMITTED };
}
