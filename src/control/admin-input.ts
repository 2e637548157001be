import type { IncomingMessage } from 'node:http';
import { ControlError } from './control-error.js';
import type { Step } from './journal-entry.js';
import type { RequestFilter } from './journal.js';

const STEPS = new Set<string>(['auth', 'rate_limit', 'quota', 'match', 'validation', 'failure', 'fault', 'response', 'preflight', 'bad_request', 'upstream']);
const MAX_ADMIN_BODY = 64 * 1024;

/** The journal filter of an admin query string; a malformed value is a 400. */
export function readFilter(query: URLSearchParams): RequestFilter {
  const filter: RequestFilter = {};
  const text = (name: string): string | undefined => {
    const value = query.get(name);
    return value === null || value === '' ? undefined : value;
  };
  const whole = (name: string): number | undefined => {
    const value = text(name);
    if (value === undefined) return undefined;
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new ControlError(400, 'bad_request', `${name} must be a whole number, got ${JSON.stringify(value)}`);
    return Number(value);
  };
  filter.method = text('method');
  filter.path = text('path');
  filter.endpoint = text('endpoint');
  filter.status = whole('status');
  filter.since = whole('since');
  filter.limit = whole('limit');
  const step = text('step');
  if (step !== undefined && !STEPS.has(step)) throw new ControlError(400, 'bad_request', `step must be one of ${[...STEPS].join(', ')}, got ${JSON.stringify(step)}`);
  filter.step = step as Step | undefined;
  const violations = text('violations');
  if (violations !== undefined && violations !== 'true' && violations !== 'false') throw new ControlError(400, 'bad_request', `violations must be true or false, got ${JSON.stringify(violations)}`);
  if (violations !== undefined) filter.violations = violations === 'true';
  const futile = text('futile');
  if (futile !== undefined && futile !== 'true' && futile !== 'false') throw new ControlError(400, 'bad_request', `futile must be true or false, got ${JSON.stringify(futile)}`);
  if (futile !== undefined) filter.futile = futile === 'true';
  for (const key of Object.keys(filter) as (keyof RequestFilter)[]) if (filter[key] === undefined) delete filter[key];
  return filter;
}

/**
 * The request's JSON object body (`{}` when empty); not an object or not JSON is a 400, over
 * `limit` bytes (default 64 KiB; a stub's is `server.maxBodySize`) a 413 saying `tooLarge`. A body
 * over the limit is still read to its end (and dropped) before the 413: leaving the loop early
 * destroys the request and its connection under a client still sending, which then never reads
 * the answer. requestTimeout bounds the read.
 */
export async function readJsonBody(req: IncomingMessage, limit = MAX_ADMIN_BODY, tooLarge = `admin calls take bodies up to ${limit} bytes`): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
    else chunks.length = 0;
  }
  if (size > limit) throw new ControlError(413, 'payload_too_large', tooLarge);
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ControlError(400, 'bad_request', 'the body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ControlError(400, 'bad_request', 'the body must be a JSON object');
  return value as Record<string, unknown>;
}
