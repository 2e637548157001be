// The values of the CLI's options, checked as commander reads them: a bad one is a usage error
// (exit 2) naming the option, before any command runs.
import { InvalidArgumentError } from 'commander';
import { checkStoreUrl } from '../config/store-url.js';
import { parseDuration } from '../config/units.js';
import { adminTokenProblem } from '../control/admin-guard.js';
import { CLOCK_RANGE_TEXT, isClockTime, parseIsoTime } from '../control/virtual-clock.js';

export function parsePort(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535)
    throw new InvalidArgumentError('must be an integer from 0 to 65535.');
  return Number(value);
}

export function parseSeed(value: string): number {
  if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new InvalidArgumentError('must be an integer.');
  return Number(value);
}

/** `--workers`: processes, 1 to 256. */
export const parseWorkers = (value: string): number => integerFrom1To256(value);

export function parseStoreUrl(value: string): string {
  const problem = checkStoreUrl(value);
  if (problem !== undefined) throw new InvalidArgumentError(`${problem}.`);
  return value;
}

export function parseClock(value: string): string {
  const time = parseIsoTime(value);
  if (time === undefined)
    throw new InvalidArgumentError('must be an ISO time with a zone, such as 2026-11-30T23:59:59Z.');
  if (!isClockTime(time)) throw new InvalidArgumentError(`must be a time ${CLOCK_RANGE_TEXT}.`);
  return value;
}

export function parseDrain(value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined) throw new InvalidArgumentError('must be a duration such as 500ms, 10s or 2m.');
  return ms;
}

export function parseUpstreamUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('must be an http:// or https:// URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError('must be an http:// or https:// URL.');
  if (url.username !== '' || url.password !== '')
    throw new InvalidArgumentError(
      'must not carry a user or password; set upstream.auth from the environment instead.',
    );
  return value;
}

export function parseTimeout(value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined || ms === 0)
    throw new InvalidArgumentError('must be a duration longer than 0, such as 500ms, 10s or 1m.');
  return ms;
}

/** `--concurrency`: requests at once, 1 to 256. */
export const parseConcurrency = (value: string): number => integerFrom1To256(value);

function integerFrom1To256(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 256)
    throw new InvalidArgumentError('must be an integer from 1 to 256.');
  return Number(value);
}

export function parseAdminToken(value: string): string {
  const problem = adminTokenProblem(value);
  if (problem !== undefined) throw new InvalidArgumentError(`${problem}.`);
  return value;
}
