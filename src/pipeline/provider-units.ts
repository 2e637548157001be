/**
 * The providers' units and formats (src/pipeline/provider-headers.ts and provider-ietf.ts write
 * with them): a meter's header name, what is left of it, a limit and a whole amount as text, a Go
 * duration (OpenAI's resets) and an RFC 3339 time (Anthropic's).
 */
import { METER_SCALE, type MeterConfig } from '../config/types.js';
import { integerText } from '../integer-text.js';
import type { MeterStatus } from './meters.js';

/** A meter's name in a provider's headers. */
export function headerNameOf(meter: MeterConfig): string {
  return meter.headerName ?? meter.name.replace(/_/g, '-');
}

/** What is left of a meter, in its unit, never below 0. */
export function remainingOf(status: MeterStatus): number {
  return Math.max(0, status.meter.limit - status.used);
}

/** A limit in its unit: whole units, else up to 3 decimals (a limit is what the config says). */
export function limitText(units: number): string {
  if (units % METER_SCALE === 0) return String(units / METER_SCALE);
  return (Math.round((units / METER_SCALE) * 1000) / 1000).toFixed(3).replace(/\.?0+$/, '');
}

/**
 * A remaining or used amount as the providers write it: a whole number (OpenAI, Anthropic and
 * GitHub send integers, and the ietf draft's `r` is an Integer), remaining rounded down — what a
 * client may still ask for —, used rounded up, so that used + remaining never exceeds the limit.
 */
export function wholeText(units: number, round: 'down' | 'up'): string {
  const whole = round === 'down' ? Math.floor(units / METER_SCALE) : Math.ceil(units / METER_SCALE);
  return integerText(whole);
}

/** A Go duration, as OpenAI writes its resets: `0s`, `12ms`, `1.5s`, `6m0s`, `1h2m3s`. */
export function goDuration(ms: number): string {
  const whole = Math.max(0, Math.round(ms));
  if (whole === 0) return '0s';
  if (whole < 1000) return `${whole}ms`;
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor((whole % 3_600_000) / 60_000);
  const seconds = ((whole % 60_000) / 1000).toFixed(3).replace(/\.?0+$/, '');
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}

/** An RFC 3339 time in whole seconds, as Anthropic writes its resets: `2026-05-01T12:00:30Z`. */
export function rfc3339(ms: number): string {
  return `${new Date(Math.ceil(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`;
}
