import type { IncomingMessage } from 'node:http';
import { ControlError } from './control-error.js';
import type { Step } from './journal-entry.js';
import type { RequestFilter } from './journal.js';

const STEPS = new Set<string>([
  'auth',
  'rate_limit',
  'quota',
  'match',
  'validation',
  'failure',
  'fault',
  'response',
  'preflight',
  'bad_request',
  'upstream',
]);
/** The largest body an admin call takes (a stub's is `server.maxBodySize`, a resource call's its own). */
export const MAX_ADMIN_BODY = 64 * 1024;

/** The 413's words for a body over `limit` bytes. */
export function adminBodyTooLarge(limit: number): string {
  return `admin calls take bodies up to ${limit} bytes`;
}

function checkStep(step: unknown): void {
  if (step !== undefined && !(typeof step === 'string' && STEPS.has(step)))
    throw new ControlError(
      400,
      'bad_request',
      `step must be one of ${[...STEPS].join(', ')}, got ${JSON.stringify(step)}`,
    );
}

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
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
      throw new ControlError(400, 'bad_request', `${name} must be a whole number, got ${JSON.stringify(value)}`);
    return Number(value);
  };
  filter.method = text('method');
  filter.path = text('path');
  filter.endpoint = text('endpoint');
  filter.status = whole('status');
  filter.since = whole('since');
  filter.limit = whole('limit');
  filter.step = text('step') as Step | undefined;
  checkStep(filter.step);
  const violations = text('violations');
  if (violations !== undefined && violations !== 'true' && violations !== 'false')
    throw new ControlError(400, 'bad_request', `violations must be true or false, got ${JSON.stringify(violations)}`);
  if (violations !== undefined) filter.violations = violations === 'true';
  const futile = text('futile');
  if (futile !== undefined && futile !== 'true' && futile !== 'false')
    throw new ControlError(400, 'bad_request', `futile must be true or false, got ${JSON.stringify(futile)}`);
  if (futile !== undefined) filter.futile = futile === 'true';
  for (const key of Object.keys(filter) as (keyof RequestFilter)[]) if (filter[key] === undefined) delete filter[key];
  return filter;
}

/**
 * The request's JSON object body (`{}` when empty); not an object or not JSON is a 400, over
 * `limit` bytes (default 64 KiB; a stub's is `server.maxBodySize`) a 413 saying `tooLarge` — at
 * once: when Content-Length says so, or when the bytes read pass the limit. The rest of such a
 * body is not kept: the answer's writer (endAfterBody) reads and drops it and ends the 413 once
 * the client stopped sending, as /mock does (closing under a client still sending would destroy
 * the answer before it is read); requestTimeout bounds that.
 */
export function readJsonBody(
  req: IncomingMessage,
  limit = MAX_ADMIN_BODY,
  tooLarge = adminBodyTooLarge(limit),
): Promise<Record<string, unknown>> {
  const announced = req.headers['content-length'];
  if (announced !== undefined && Number(announced) > limit)
    return Promise.reject(new ControlError(413, 'payload_too_large', tooLarge));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (): void => {
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('error', onError);
      req.removeListener('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      stop();
      chunks.length = 0;
      reject(new ControlError(413, 'payload_too_large', tooLarge));
    };
    const onEnd = (): void => {
      stop();
      try {
        resolve(parseJsonObject(Buffer.concat(chunks).toString('utf8').trim()));
      } catch (err) {
        reject(err as Error);
      }
    };
    const onError = (err: Error): void => {
      stop();
      reject(err);
    };
    // A client gone before the end: nothing to answer, and nothing left waiting.
    const onClose = (): void =>
      onError(new ControlError(400, 'bad_request', 'the client closed the request before its body ended'));
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    req.once('close', onClose);
  });
}

export function parseJsonObject(text: string): Record<string, unknown> {
  if (text === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ControlError(400, 'bad_request', 'the body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new ControlError(400, 'bad_request', 'the body must be a JSON object');
  return value as Record<string, unknown>;
}
