import type { AuthSource } from '../config/types.js';
import { hash } from 'node:crypto';

/**
 * Outcome of the auth step: `ok` → the key named `default` (`apiKey`), a {@link NamedKey} → that key
 * of `keys:`, `missing` → 401 "No API key provided", `invalid` → 401 "Invalid API key".
 */
export type AuthVerdict = 'ok' | 'missing' | 'invalid' | NamedKey;

/** A key of `keys:`, as the auth step names it: made once per config, so a verdict allocates nothing. */
export interface NamedKey {
  readonly name: string;
  /** Its position in `keys:`. */
  readonly index: number;
  /** The first 12 hex digits of its sha256: how early retries tell its clients apart (never the key). */
  readonly short: string;
}

/**
 * The current API key, kept only as its sha256 digest. Every candidate is hashed too, so the
 * comparison always runs on two 32-byte digests: it is constant-time, never throws on a length
 * mismatch and reveals nothing about the key's length. The key itself is not stored, so a matcher
 * can never leak it into a log.
 */
export interface KeyMatcher {
  /**
   * The digest as a 32-character latin1 string, one character per byte: asking Node for a string
   * digest costs about half of asking for a Buffer (~270 ns against ~600 ns per request).
   */
  readonly digest: string;
  /** The first 12 hex digits of `digest`: how early retries name a client of `apiKey` (never the key). */
  readonly short: string;
  /**
   * The keys of `keys:` by digest; absent when only `apiKey` is configured. A candidate's digest is
   * looked up here after the constant-time comparison with `apiKey`'s: what a lookup's timing could
   * tell is about the digest of what the client sent, never about a key.
   */
  readonly named?: ReadonlyMap<string, NamedKey>;
  /**
   * `auth.accept` of the config this key is served with; undefined for the default list
   * (`X-API-Key`, then `Authorization: Bearer`/`Basic`), which {@link createConnectionAuth} serves.
   */
  readonly accept?: readonly AuthSource[];
}

/** The headers checkAuth reads, as Node's IncomingMessage.headers presents them. */
export interface AuthHeaders {
  'x-api-key'?: string | string[];
  authorization?: string;
}

/**
 * Builds the matcher for `apiKey` (and the keys of `keys:`, read from the places of `auth.accept`)
 * once per config, so requests only hash the candidate.
 */
export function createKeyMatcher(
  apiKey: string,
  keys?: ReadonlyArray<{ name: string; key: string }>,
  accept?: readonly AuthSource[],
): KeyMatcher {
  const named =
    keys === undefined || keys.length === 0
      ? undefined
      : new Map(
          keys.map(({ name, key }, index) => {
            const digest = sha256(key);
            return [digest, { name, index, short: shortOf(digest) }];
          }),
        );
  const digest = sha256(apiKey);
  return {
    digest,
    short: shortOf(digest),
    ...(named === undefined ? {} : { named }),
    ...(accept === undefined ? {} : { accept }),
  };
}

/**
 * Decides whether a request carries the current key.
 *
 * - `X-API-Key` wins when it is present with a non-empty value; otherwise `Authorization` is used.
 *   Node joins a repeated `X-API-Key` into `"a, b"`; keys never contain whitespace, so such a value
 *   (or an array of several values) is `invalid`, never `ok`.
 * - Leading and trailing optional whitespace (SP, HTAB) is ignored in both headers. Between the
 *   scheme and the token, one or more SP/HTAB are accepted (RFC 7235 requires 1*SP; more is
 *   tolerated because being picky here only produces confusing 401s).
 * - The scheme is case-insensitive. An empty header, a scheme without a token, or an unknown scheme
 *   is `missing`.
 * - `Bearer <key>`: any other token is `invalid`.
 * - `Basic <base64>`: the token must be canonical RFC 4648 base64 (standard alphabet, `=` padding
 *   required — unpadded is rejected, as RFC 7617 uses padded base64) that decodes to valid UTF-8;
 *   otherwise `invalid`. The username is the text before the first `:`; the password is ignored.
 *   A decoded value without any `:` is taken whole as the username, so `base64(<key>)` also works.
 *
 * - Several `Authorization` headers never authenticate either (`invalid`): Node keeps only the first
 *   in `headers`, so `rawHeaders` (when given) is checked for a second one.
 *
 * Never throws, whatever the header values contain.
 */
export function checkAuth(headers: AuthHeaders, key: KeyMatcher, rawHeaders?: readonly string[]): AuthVerdict {
  const apiKey = headerValue(headers['x-api-key']);
  if (apiKey !== '') return matches(apiKey, key);

  const authorization = headers.authorization;
  if (typeof authorization !== 'string') return 'missing';
  if (rawHeaders !== undefined && countAuthorization(rawHeaders) > 1) return 'invalid';
  const value = trimOws(authorization);
  const schemeEnd = indexOfOws(value);
  // value is trimmed: no OWS inside means a bare scheme (or an empty header), i.e. no token.
  if (schemeEnd === value.length) return 'missing';
  let tokenStart = schemeEnd + 1;
  while (isOws(value.charCodeAt(tokenStart))) tokenStart++;
  const token = value.slice(tokenStart);

  if (equalsAsciiCaseless(value, schemeEnd, 'bearer')) return matches(token, key);
  if (equalsAsciiCaseless(value, schemeEnd, 'basic')) {
    const username = basicUsername(token);
    if (username === undefined) return 'invalid';
    return matches(username, key);
  }
  return 'missing';
}

/** How many `Authorization` fields a request sent (rawHeaders alternates names and values). */
export function countAuthorization(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length === 13 && name.toLowerCase() === 'authorization') count++;
  }
  return count;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The username of a Basic token, or undefined when the token is not strict base64 of UTF-8. */
export function basicUsername(token: string): string | undefined {
  if (token.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(token, 'base64');
  // Node's decoder skips junk characters and accepts base64url and bad padding; re-encoding and
  // comparing is an exact test for canonical, padded, standard-alphabet base64.
  if (bytes.toString('base64') !== token) return undefined;
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return undefined;
  }
  const colon = text.indexOf(':');
  return colon === -1 ? text : text.slice(0, colon);
}

/** What one connection presented last, and the verdict it got. */
interface Remembered {
  key: KeyMatcher;
  header: 'x-api-key' | 'authorization';
  value: string;
  verdict: AuthVerdict;
}

/** checkAuth's signature, with the connection the request came on. */
export type ConnectionAuth = (
  headers: AuthHeaders,
  key: KeyMatcher,
  rawHeaders: readonly string[],
  connection: object,
) => AuthVerdict;

/**
 * {@link checkAuth} with a memory per connection. A keep-alive client sends the same credentials
 * with every request, and hashing them is the dearest step of the pipeline (~0.7 µs, about 8 % of
 * a request). When a connection presents exactly what it presented before, for the same key, the
 * verdict is reused. The memory compares the client's new header with its own previous one, values
 * the client already knows, so it reveals nothing about the key; the key itself is still only ever
 * compared as a digest. Used only where the verdict depends on that one header alone (a single
 * non-blank `X-API-Key`, or no `X-API-Key` and a single `Authorization`).
 */
export function createConnectionAuth(): ConnectionAuth {
  const remembered = new WeakMap<object, Remembered>();
  return (headers, key, rawHeaders, connection) => {
    const apiKey = headers['x-api-key'];
    let header: Remembered['header'];
    let value: string;
    if (typeof apiKey === 'string' && trimOws(apiKey) !== '') {
      header = 'x-api-key';
      value = apiKey;
    } else if (
      apiKey === undefined &&
      typeof headers.authorization === 'string' &&
      countAuthorization(rawHeaders) === 1
    ) {
      header = 'authorization';
      value = headers.authorization;
    } else {
      return checkAuth(headers, key, rawHeaders);
    }
    const last = remembered.get(connection);
    if (last !== undefined && last.key === key && last.header === header && last.value === value) return last.verdict;
    const verdict = checkAuth(headers, key, rawHeaders);
    remembered.set(connection, { key, header, value, verdict });
    return verdict;
  };
}

/** `ok` for `apiKey`, the {@link NamedKey} of another configured key, else `invalid`. */
export function matches(candidate: string, key: KeyMatcher): AuthVerdict {
  const digest = sha256(candidate);
  if (equalDigests(digest, key.digest)) return 'ok';
  return key.named?.get(digest) ?? 'invalid';
}

/** The first 12 hex digits of a latin1 digest. */
export function shortOf(digest: string): string {
  return Buffer.from(digest, 'latin1').toString('hex').slice(0, 12);
}

function sha256(text: string): string {
  return hash('sha256', text, 'binary'); // latin1: one character per byte
}

const DIGEST_LENGTH = 32;

/** Constant-time: every one of the 32 characters is compared, with no early exit. */
function equalDigests(a: string, b: string): boolean {
  let diff = (a.length ^ DIGEST_LENGTH) | (b.length ^ DIGEST_LENGTH);
  for (let i = 0; i < DIGEST_LENGTH; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** The trimmed X-API-Key value; '' when absent or blank. Several values can never authenticate. */
export function headerValue(raw: string | string[] | undefined): string {
  if (raw === undefined) return '';
  if (typeof raw === 'string') return trimOws(raw);
  if (raw.length === 1) return trimOws(raw[0] ?? '');
  if (raw.every((value) => trimOws(value) === '')) return '';
  // Joined the way Node joins a repeated header: it contains a space, so it never equals a key.
  return raw.join(', ');
}

function isOws(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

/** `text` without leading and trailing SP/HTAB. */
export function trimOws(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isOws(text.charCodeAt(start))) start++;
  while (end > start && isOws(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

function indexOfOws(text: string): number {
  for (let i = 0; i < text.length; i++) if (isOws(text.charCodeAt(i))) return i;
  return text.length;
}

/** True when text[0, length) equals `lower` ignoring ASCII case (`lower` is lower-case ASCII). */
function equalsAsciiCaseless(text: string, length: number, lower: string): boolean {
  if (length !== lower.length) return false;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    const folded = code >= 0x41 && code <= 0x5a ? code | 0x20 : code;
    if (folded !== lower.charCodeAt(i)) return false;
  }
  return true;
}
