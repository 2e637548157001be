import type { IncomingHttpHeaders } from 'node:http';
import type { AuthSource } from '../config/types.js';
import { parseCookies, parseQuery } from './request-parts.js';
import {
  basicUsername,
  countAuthorization,
  headerValue,
  matches,
  trimOws,
  type AuthVerdict,
  type KeyMatcher,
} from './auth.js';

/**
 * `auth.accept`: the places a key may come from, in order of precedence. The first form present
 * with a non-empty value decides, as `X-API-Key` decides over `Authorization` by default. Used only
 * for a config that sets `auth.accept`; the default list keeps the per-connection path of auth.ts.
 */

/** What a request presents: its headers (as Node gives them), its URL (for the query) and rawHeaders. */
export interface CredentialRequest {
  readonly headers: IncomingHttpHeaders;
  readonly url: string;
  readonly rawHeaders: readonly string[];
}

/** The credential that decides: where it came from, and the key it names (undefined: it can never be one). */
export interface FoundCredential {
  readonly source: AuthSource;
  readonly candidate: string | undefined;
}

/** The default list, the behaviour of a config without `auth.accept`. */
export const DEFAULT_ACCEPT: readonly AuthSource[] = [{ kind: 'x-api-key' }, { kind: 'bearer' }, { kind: 'basic' }];

/** `Authorization` split once: its scheme in lower case and its token ('' when none). */
interface Authorization {
  scheme: string;
  token: string;
  repeated: boolean;
}

function readAuthorization(request: CredentialRequest): Authorization | undefined {
  const raw = request.headers.authorization;
  if (typeof raw !== 'string') return undefined;
  const value = trimOws(raw);
  const match = /^(\S+)[ \t]+(.*)$/s.exec(value);
  return {
    scheme: (match?.[1] ?? value).toLowerCase(),
    token: match?.[2] ?? '',
    repeated: countAuthorization(request.rawHeaders) > 1,
  };
}

/** A single value: '' when absent or blank, undefined when several were sent (never a key). */
function single(value: string | readonly string[] | undefined): string | undefined {
  if (value === undefined) return '';
  if (typeof value === 'string') return trimOws(value);
  const filled = value.filter((v) => trimOws(v) !== '');
  return filled.length === 0 ? '' : filled.length === 1 ? trimOws(filled[0] as string) : undefined;
}

/**
 * The credential that decides for `sources`, or undefined when none is present (401 "No API key
 * provided"). Never throws, whatever the request holds.
 */
export function findCredential(
  sources: readonly AuthSource[],
  request: CredentialRequest,
): FoundCredential | undefined {
  let authorization: Authorization | undefined | null = null;
  let query: Record<string, string | string[]> | undefined;
  let cookies: Record<string, string> | undefined;
  for (const source of sources) {
    switch (source.kind) {
      case 'x-api-key': {
        const value = headerValue(request.headers['x-api-key']);
        if (value !== '') return { source, candidate: value };
        break;
      }
      case 'header': {
        // Own fields only: a place named like an inherited field (`constructor`) is absent unless sent.
        const name = source.name.toLowerCase();
        const raw = Object.hasOwn(request.headers, name) ? request.headers[name] : undefined;
        const value = single(raw);
        // Node joins a repeated header into "a, b": such a value holds a space and is never a key.
        if (value !== '') return { source, candidate: value === undefined || /[ \t]/.test(value) ? undefined : value };
        break;
      }
      case 'query': {
        const url = request.url;
        const at = url.indexOf('?');
        if (at === -1) break;
        query ??= parseQuery(url.slice(at + 1).split('#')[0] as string);
        const value = single(Object.hasOwn(query, source.name) ? query[source.name] : undefined);
        if (value !== '') return { source, candidate: value };
        break;
      }
      case 'cookie': {
        const header = request.headers.cookie;
        if (header === undefined) break;
        cookies ??= parseCookies(Array.isArray(header) ? header.join('; ') : header);
        const value = Object.hasOwn(cookies, source.name) ? trimOws(cookies[source.name] as string) : '';
        if (value !== '') return { source, candidate: value };
        break;
      }
      default: {
        if (authorization === null) authorization = readAuthorization(request);
        if (authorization === undefined) break;
        // Several Authorization headers never authenticate, whatever their schemes (as by default).
        if (authorization.repeated) return { source, candidate: undefined };
        const scheme = source.kind === 'scheme' ? source.name.toLowerCase() : source.kind;
        if (authorization.token === '' || authorization.scheme !== scheme) break;
        const token = trimOws(authorization.token);
        return { source, candidate: source.kind === 'basic' ? basicUsername(token) : token };
      }
    }
  }
  return undefined;
}

/** The auth verdict of a request under `sources`: `ok` (`apiKey`), a key of `keys:`, `missing` or `invalid`. */
export function checkAccepted(
  sources: readonly AuthSource[],
  request: CredentialRequest,
  key: KeyMatcher,
): AuthVerdict {
  const found = findCredential(sources, request);
  if (found === undefined) return 'missing';
  return found.candidate === undefined ? 'invalid' : matches(found.candidate, key);
}

/** How the journal names a source: `x-api-key`, `bearer`, `basic`, or `header`/`query`/`scheme`/`cookie`. */
export function sourceLabel(source: AuthSource): { via: string; name?: string } {
  return 'name' in source ? { via: source.kind, name: source.name } : { via: source.kind };
}

/** `{ scheme: Token }`, `bearer`…: a place as `auth.accept` writes it. */
function acceptWord(scheme: string): string {
  const lower = scheme.toLowerCase();
  return lower === 'bearer' || lower === 'basic' ? lower : `{ scheme: ${scheme} }`;
}

/** How to accept `word`: add it to `auth.accept`, or, for the default list, write the list with it. */
function howToAccept(sources: readonly AuthSource[] | undefined, word: string): string {
  return sources === undefined
    ? `add auth.accept: [x-api-key, bearer, basic, ${word}] to the config`
    : `add ${word} to auth.accept`;
}

/**
 * For a request refused "No API key provided", a key it sent in a place `sources` (`auth.accept`;
 * undefined: the default list) does not read: where it was found and how to accept it, e.g.
 * `found a key in Authorization (scheme Token), which this config does not accept; add { scheme:
 * Token } to auth.accept`. Undefined when the request holds no such key. Never the key itself.
 */
export function misplacedKey(
  sources: readonly AuthSource[] | undefined,
  request: CredentialRequest,
): string | undefined {
  const list = sources ?? DEFAULT_ACCEPT;
  const authorization = readAuthorization(request);
  if (authorization !== undefined && !authorization.repeated && trimOws(authorization.token) !== '') {
    const scheme = /^(\S+)/.exec(trimOws(request.headers.authorization as string))?.[1] ?? authorization.scheme;
    const read = list.some((s) => (s.kind === 'scheme' ? s.name.toLowerCase() : s.kind) === authorization.scheme);
    if (!read)
      return `found a key in Authorization (scheme ${scheme}), which this config does not accept; ${howToAccept(sources, acceptWord(scheme))}`;
  }
  const readsHeader = (name: string): boolean =>
    list.some(
      (s) => (s.kind === 'x-api-key' && name === 'x-api-key') || (s.kind === 'header' && s.name.toLowerCase() === name),
    );
  if (headerValue(request.headers['x-api-key']) !== '' && !readsHeader('x-api-key')) {
    return `found a key in the X-API-Key header, which this config does not accept; ${howToAccept(sources, 'x-api-key')}`;
  }
  return undefined;
}
