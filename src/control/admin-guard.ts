import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';

/** Why an admin call is refused before it runs (safety rules), as status, code and message. */
export interface Refusal {
  status: number;
  code: string;
  message: string;
}

/**
 * The header every webhook delivery carries: the admin API refuses any call that has it, so a
 * delivery (whose URL may come from a request) can never rotate a key, reset usage or add a stub
 * on this or any other mockapi, whatever the path's spelling.
 */
export const DELIVERY_MARK_HEADER = 'x-mockapi-webhook-delivery';

/** The header a non-loopback server requires on admin calls. */
export const ADMIN_TOKEN_HEADER = 'x-mockapi-admin-token';

/** Whether `host` (a bind address or a Host header's name, without port) is this machine only. */
export function isLoopbackHost(host: string): boolean {
  const name = host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return true; // RFC 6761: always loopback
  if (isIP(name) === 4) return name.startsWith('127.');
  if (isIP(name) === 6) return name === '::1' || name === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(name);
  return false;
}

/** The name in a Host header, without the port (`[::1]:4010` → `::1`); undefined when malformed. */
export function hostName(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:\[\]]+)(:\d*)?$/.exec(header.trim());
  return match === null ? undefined : match[1]!.replace(/^\[|\]$/g, '').toLowerCase();
}

/** A fresh admin token for a server bound beyond loopback that was given none. */
export function generateAdminToken(): string {
  return `mkadm_${randomBytes(18).toString('base64url')}`;
}

/**
 * Why `token` cannot be an admin token, or undefined when it can. An empty token would let an
 * empty header through, and one with spaces, control or non-ASCII characters could not arrive in
 * a header as it was given (clients and the server trim and re-encode header values).
 */
export function adminTokenProblem(token: string): string | undefined {
  if (token === '') return 'must not be empty';
  if (!/^[\x21-\x7e]+$/.test(token))
    return 'must be visible ASCII characters only (no spaces), as a header carries them unchanged';
  return undefined;
}

export interface AdminGuardOptions {
  /** The address the server was bound to (`--host`). */
  bindHost: string;
  /** Required in `X-Mockapi-Admin-Token` when set; never empty (see {@link adminTokenProblem}). */
  token: string | undefined;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'DELETE', 'PATCH']);

/**
 * Builds the check every admin call passes first. In order:
 * - A **webhook delivery** (it carries {@link DELIVERY_MARK_HEADER}) is refused, 403.
 * - **Host** must name a loopback address or the host the server was bound to, else 403: a page
 *   on another site that rebinds its DNS name to 127.0.0.1 still sends its own name as Host. A
 *   request with the right admin token passes whatever its Host (a rebinding page cannot know the
 *   token), so a server bound to 0.0.0.0 in a container can be reached by its service name.
 * - **Token**, when the server has one (a non-loopback bind, or `--admin-token`): missing, empty
 *   or wrong is 401, compared in constant time. Throws a TypeError for an empty `token`.
 * - **Writes** (POST, PUT, DELETE) need `Content-Type: application/json`, else 415: a cross-site
 *   form or a "simple" fetch cannot send it without a preflight, which the admin API never allows.
 */
export function createAdminGuard(options: AdminGuardOptions): (req: IncomingMessage) => Refusal | undefined {
  const problem = options.token === undefined ? undefined : adminTokenProblem(options.token);
  if (problem !== undefined) throw new TypeError(`the admin token ${problem}`);
  const bound = options.bindHost.toLowerCase().replace(/^\[|\]$/g, '');
  const wildcard = bound === '0.0.0.0' || bound === '::' || bound === '';
  const expected = options.token === undefined ? undefined : digest(options.token);
  const tokenMatches = (req: IncomingMessage): boolean => {
    const given = req.headers[ADMIN_TOKEN_HEADER];
    // Only a non-empty header can match, compared in constant time (digests of equal length).
    return (
      expected !== undefined && typeof given === 'string' && given !== '' && timingSafeEqual(digest(given), expected)
    );
  };
  return (req) => {
    if (req.headers[DELIVERY_MARK_HEADER] !== undefined) {
      return { status: 403, code: 'forbidden', message: 'the admin API never answers a webhook delivery' };
    }
    const name = hostName(req.headers.host);
    const hostOk = name !== undefined && (isLoopbackHost(name) || (!wildcard && name === bound));
    const tokenOk = tokenMatches(req);
    if (!hostOk && !tokenOk) {
      return {
        status: 403,
        code: 'forbidden',
        message: `the admin API answers only requests whose Host is a loopback address or ${options.bindHost}, got ${JSON.stringify(req.headers.host ?? '')}`,
      };
    }
    if (expected !== undefined && !tokenOk) {
      return {
        status: 401,
        code: 'unauthorized',
        message: 'this server requires the X-Mockapi-Admin-Token header (its token was printed when it started)',
      };
    }
    if (WRITE_METHODS.has(req.method ?? '') && !isJson(req.headers['content-type'])) {
      return {
        status: 415,
        code: 'unsupported_media_type',
        message: `${req.method ?? ''} calls to the admin API need Content-Type: application/json`,
      };
    }
    return undefined;
  };
}

function isJson(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.split(';')[0]!.trim().toLowerCase() === 'application/json';
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
