import { jsonText } from '../control/call-input.js';
import { ControlError } from '../control/control-error.js';
import { checkKeys, BadInput, TooDeep } from './form.js';
import { parseListQuery } from './list.js';

/**
 * What an admin call on resources carries, read once for both ways of calling: the HTTP routes
 * read it from the query string and the body; `server.resources.<name>` builds the query and the
 * JSON that `connectMockServer` would send, and reads them here too. So a wrong body or filter is
 * the same answer, with the same words, in process and over HTTP.
 */

/** Bodies of admin calls on resources: a whole collection may come in one. */
export const MAX_RESOURCE_BODY = 64 * 1024 * 1024;

/** The 413's words for a body over {@link MAX_RESOURCE_BODY}. */
export const RESOURCE_BODY_TOO_LARGE = `admin calls on resources take bodies up to ${MAX_RESOURCE_BODY} bytes`;

/** A body's JSON text, parsed; not JSON, a key that reaches a prototype or too deep is a 400. */
export function readResourceBody(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ControlError(400, 'bad_request', 'the body is not valid JSON');
  }
  try {
    return checkKeys(value);
  } catch (err) {
    if (err instanceof TooDeep) throw new ControlError(400, 'bad_request', err.message);
    if (err instanceof BadInput)
      throw new ControlError(400, 'bad_request', `${err.message} (keys that reach a prototype are refused)`);
    throw err;
  }
}

/** A body given in process, read as the route reads it once sent as JSON (413 over {@link MAX_RESOURCE_BODY} bytes). */
export function resourceBodyOf(value: unknown): unknown {
  return readResourceBody(jsonText(value, MAX_RESOURCE_BODY, RESOURCE_BODY_TOO_LARGE));
}

/** The filter of a collection's list: its query parameters but `session` and `history`, brackets read as a list's query is. */
export function readResourceFilter(query: URLSearchParams): Record<string, unknown> {
  const kept = new URLSearchParams([...query].filter(([name]) => name !== 'session' && name !== 'history'));
  return parseListQuery(kept.toString());
}
