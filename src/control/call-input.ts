import { describeValue } from '../config/issues.js';
import { adminBodyTooLarge, MAX_ADMIN_BODY, parseJsonObject, readFilter } from './admin-input.js';
import { ControlError } from './control-error.js';
import type { ControlPlane } from './control-types.js';
import type { RequestFilter } from './journal.js';
import { parseSpan, type WaitOptions } from './wait.js';

// What a control call carries, read once for both ways of calling: the admin API reads it from the
// query string and the JSON body; the object of `startMockServer` builds the query and body that
// `connectMockServer` would send, and reads them here too. So a wrong part, filter or option is the
// same 400, with the same words, in process and over HTTP.

/** A filter (and extras) as `connectMockServer` sends them: a query string, absent values left out. */
export function filterQuery(
  filter: RequestFilter = {},
  extra: Record<string, string | number | undefined> = {},
): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...filter, ...extra }))
    if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** A wait's options as query parameters: a timeout that reads as a span in milliseconds, another as it is (the server says what is wrong with it). */
export function waitQuery(options: WaitOptions = {}): Record<string, string | number | undefined> {
  const ms = options.timeout === undefined ? undefined : parseSpan(options.timeout);
  return {
    count: options.count,
    timeout: options.timeout === undefined ? undefined : ms === undefined ? String(options.timeout) : `${ms}ms`,
  };
}

/** A wait's `count` and `timeout` in the admin query; a count that is not a whole number is a 400. */
export function readWaitOptions(query: URLSearchParams): WaitOptions {
  const count = query.get('count');
  if (count !== null && !/^\d+$/.test(count))
    throw new ControlError(400, 'bad_request', `count must be a whole number, got ${JSON.stringify(count)}`);
  return { count: count === null ? undefined : Number(count), timeout: query.get('timeout') ?? undefined };
}

/** A filter given in process, read as the admin API reads the query `connectMockServer` makes of it. */
export function filterOf(filter: RequestFilter | undefined): RequestFilter {
  return readFilter(new URLSearchParams(filterQuery(filter)));
}

/** A wait's filter and options given in process, read as the admin API reads them. */
export function waitOf(
  filter: RequestFilter | undefined,
  options: WaitOptions | undefined,
): [RequestFilter, WaitOptions] {
  const query = new URLSearchParams(filterQuery(filter, waitQuery(options)));
  return [readFilter(query), readWaitOptions(query)];
}

/**
 * A body given in process as the admin API reads it once sent as JSON (`undefined` fields left out,
 * `NaN` as null…): over `limit` bytes of that JSON (what `connectMockServer` would send, measured
 * as the route measures it) it is the route's 413 `payload_too_large`, saying `tooLarge`.
 */
export function jsonBody(
  value: unknown,
  limit = MAX_ADMIN_BODY,
  tooLarge = adminBodyTooLarge(limit),
): Record<string, unknown> {
  return parseJsonObject(jsonText(value, limit, tooLarge));
}

/** The JSON text `connectMockServer` sends for `value` (`{}` for none); over `limit` bytes a 413 saying `tooLarge`. */
export function jsonText(value: unknown, limit: number, tooLarge: string): string {
  const text = JSON.stringify(value ?? {}) ?? '';
  // (UTF-8 takes at least one byte a character and at most three a UTF-16 unit: most texts need no count)
  if (text.length > limit || (text.length * 3 > limit && Buffer.byteLength(text, 'utf8') > limit))
    throw new ControlError(413, 'payload_too_large', tooLarge);
  return text;
}

/** The parts `reset` zeroes, in the order it names them. */
export const RESET_PARTS = [
  'journal',
  'usage',
  'rateLimit',
  'sequences',
  'scenarios',
  'clock',
  'stubs',
  'resources',
] as const;

/** The parts of a reset body (`{"stubs": false}`); another field, or a value that is not a boolean, is a 400. */
export function readResetParts(body: Record<string, unknown>): Record<string, boolean> {
  const picked: Record<string, boolean> = {};
  for (const [name, value] of Object.entries(body)) {
    if (!(RESET_PARTS as readonly string[]).includes(name))
      throw new ControlError(400, 'bad_request', `unknown field "${name}"; reset takes ${RESET_PARTS.join(', ')}`);
    if (typeof value !== 'boolean') throw new ControlError(400, 'bad_request', `${name} must be true or false`);
    picked[name] = value;
  }
  return picked;
}

/** The key and the key's name of a rotate-key body; either, when given, must be text. */
export function readRotateKey(body: Record<string, unknown>): { key?: string; name?: string } {
  if (body.key !== undefined && typeof body.key !== 'string')
    throw new ControlError(400, 'bad_request', 'key must be a string');
  if (body.name !== undefined && typeof body.name !== 'string')
    throw new ControlError(400, 'bad_request', 'name must be the name of a key');
  return {
    ...(body.key === undefined ? {} : { key: body.key as string }),
    ...(body.name === undefined ? {} : { name: body.name as string }),
  };
}

/**
 * The scenario `scenarios.set` names, read as the admin API gets it: `connectMockServer` puts it in
 * the path (`PUT /__mockapi/scenarios/<name>`), where a name the URL resolves away (empty, `.`,
 * `..`) reaches a path that takes GET only: the admin API's 405, with its words, in process too.
 */
export function readScenarioName(name: string): string {
  const text = String(name);
  const path = new URL(`scenarios/${encodeURIComponent(text)}`, 'http://mockapi.invalid/__mockapi/').pathname;
  if (path === '/__mockapi/scenarios/' || !path.startsWith('/__mockapi/scenarios/'))
    throw new ControlError(405, 'method_not_allowed', `${path} takes GET`);
  return text;
}

/** The state of a scenario body (`{"state": "<state>"}`). */
export function readScenarioState(body: Record<string, unknown>): string {
  if (typeof body.state !== 'string')
    throw new ControlError(400, 'bad_request', 'the body must be {"state": "<state>"}');
  return body.state;
}

/** The time `clock.set` sends: ISO text for a Date or epoch milliseconds that make one, anything else as it is. */
export function clockSetValue(time: unknown): unknown {
  const at = time instanceof Date ? time.getTime() : typeof time === 'number' ? time : undefined;
  if (at === undefined) return time;
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? String(time) : date.toISOString();
}

/** `POST /__mockapi/clock`: moves the clock as the body says (`set` an ISO time, or `advance` a duration). */
export async function moveClock(plane: ControlPlane, body: Record<string, unknown>): Promise<{ now: string }> {
  await plane.clock.now(); // a server without --clock: 409 no_virtual_clock, whatever the body
  if ((body.set === undefined) === (body.advance === undefined))
    throw new ControlError(400, 'bad_request', 'the body must be {"set": "<ISO time>"} or {"advance": "<duration>"}');
  // Over HTTP a time is ISO text only (a number would be read as epoch milliseconds).
  if (body.set !== undefined && typeof body.set !== 'string')
    throw new ControlError(
      400,
      'bad_request',
      `set must be an ISO time such as 2026-11-30T23:59:59Z, got ${describeValue(body.set)}`,
    );
  return body.set !== undefined ? plane.clock.set(body.set as string) : plane.clock.advance(body.advance as string);
}
