/**
 * `Retry-After` as read from outside (a webhook receiver, an upstream, a configured header): a
 * delay in milliseconds, never negative and never over `maxMs`, so a value such as
 * `9999999999999` or an HTTP-date in the year 275760 can never push a time past what a Date can
 * hold (a `toISOString` that throws) or a timer past what it can wait.
 */

/** The longest a webhook receiver may ask to wait (a day); longer asks wait this long. */
export const MAX_RECEIVER_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/** The longest Retry-After remembered for early retries (a quota's `until-reset` is at most a month). */
export const MAX_GIVEN_RETRY_AFTER_MS = 400 * 24 * 60 * 60 * 1000;

/** `value` (delay-seconds or an HTTP-date, against `now`) as milliseconds in `[0, maxMs]`; undefined when it is neither. */
export function retryAfterDelay(value: string | undefined, now: number, maxMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    if (text.length > 64) return undefined; // no HTTP-date is that long
    const at = Date.parse(text);
    if (!Number.isFinite(at)) return undefined;
    ms = at - now;
  }
  return Math.min(maxMs, Math.max(0, ms));
}

/** The latest moment an HTTP-date may name here: the last a four-digit year can (a Date holds it). */
const LATEST_MOMENT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * `value` as the moment it names: delay-seconds after `now` (at most `maxDelayMs`), or the
 * HTTP-date itself, kept where it is (a fixed date names the same moment on every answer) but
 * never past the year 9999; undefined when it is neither.
 */
export function retryAfterMoment(value: string, now: number, maxDelayMs: number): number | undefined {
  const text = value.trim();
  if (/^\d+$/.test(text)) return now + Math.min(maxDelayMs, Number(text) * 1000);
  if (text.length > 64) return undefined; // no HTTP-date is that long
  const at = Date.parse(text);
  return Number.isFinite(at) ? Math.min(LATEST_MOMENT, at) : undefined;
}
