import { randomBytes } from 'node:crypto';

/*
 * Session ids: 1 to 64 of `A-Z a-z 0-9 _ . -`, and never `.` or `..` (a path segment that clients
 * and proxies resolve away: `/__session/../mock/x` would reach the default session by another name).
 */

/** The longest session id. */
export const MAX_SESSION_ID = 64;

const ID = /^[A-Za-z0-9_.-]{1,64}$/;

/** What an id must be, as the 400s say it. */
export const SESSION_ID_RULE = 'a session id is 1 to 64 of letters, digits, `_`, `.` and `-` (not `.` or `..`)';

/** Why `id` is not a session id, or undefined when it is one. Never throws; reads at most 65 characters of it. */
export function sessionIdProblem(id: string): string | undefined {
  if (id.length === 0) return `${SESSION_ID_RULE}, got an empty one`;
  if (id.length > MAX_SESSION_ID) return `${SESSION_ID_RULE}, got one of ${id.length} characters`;
  if (!ID.test(id)) return `${SESSION_ID_RULE}, got ${JSON.stringify(id)}`;
  if (id === '.' || id === '..') return `${SESSION_ID_RULE}, got ${JSON.stringify(id)}`;
  return undefined;
}

/** A fresh id for `POST /__mockapi/sessions` without one: `s_` and 20 characters of 120 random bits. */
export function newSessionId(): string {
  return `s_${randomBytes(15).toString('base64url')}`;
}
