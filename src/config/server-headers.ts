import type { ExpressionOptions } from '../expression/compile.js';

/**
 * What `server.headers` may set and read: the config's rules check its values with these, and the
 * answers compile them with the same options (src/answer/server-headers.ts).
 */

/**
 * What `server.headers` cannot read, with why: they are made when a request arrives, for every
 * answer — a 401 and a 404 included — before any endpoint matched and before the body is read.
 */
export const SERVER_HEADER_UNAVAILABLE: Readonly<Record<string, string>> = {
  params:
    '`params` cannot be read in `server.headers`: they are made for every answer, before an endpoint matched (a 401 and a 404 included)',
  body: '`body` cannot be read in `server.headers`: they are made when a request arrives, before its body is read',
  resources: '`resources` cannot be read in `server.headers`',
};

/** Names `server.headers` may not set: they frame the message or the connection, which every answer sets for itself. */
export { FRAMING_HEADERS } from '../hop-by-hop.js';

/** The expression options of a `server.headers` value. */
export function serverHeaderOptions(
  scenarios: readonly string[],
  env?: Readonly<Record<string, string | undefined>>,
): ExpressionOptions {
  return { scenarios, unavailable: SERVER_HEADER_UNAVAILABLE, ...(env === undefined ? {} : { env }) };
}
