import type { AuthSource } from '../config/types.js';

/**
 * The places the client's credential for the mock travels in, taken out of what goes upstream: the
 * mock's key is not the upstream's. `X-API-Key` and `Authorization` (bearer, basic, a scheme) are never
 * forwarded at all (see step.ts); these remove the header, query parameter and cookie names
 * `auth.accept` lists, and keep everything else exactly as sent.
 */

/** Headers and cookies to remove for `accept` (lower-case header names, cookie names as written). */
export interface MockCredentialPlaces {
  headers: Set<string>;
  queries: Set<string>;
  cookies: Set<string>;
}

/** Where `auth.accept` may read the mock's key from, beyond X-API-Key and Authorization. */
export function credentialPlaces(accept: readonly AuthSource[] | undefined): MockCredentialPlaces {
  const places: MockCredentialPlaces = { headers: new Set(), queries: new Set(), cookies: new Set() };
  for (const source of accept ?? []) {
    if (source.kind === 'header') places.headers.add(source.name.toLowerCase());
    else if (source.kind === 'query') places.queries.add(source.name);
    else if (source.kind === 'cookie') places.cookies.add(source.name);
  }
  return places;
}

/**
 * The target without the query parameters named in `names` (`?api_key=`): the rest of the query is
 * kept as sent.
 */
export function withoutQueryKeys(target: string, names: ReadonlySet<string>): string {
  const q = target.indexOf('?');
  if (names.size === 0 || q === -1) return target;
  const kept = target
    .slice(q + 1)
    .split('&')
    .filter((pair) => {
      const raw = pair.split('=')[0] ?? '';
      let name = raw;
      try {
        name = decodeURIComponent(raw.replace(/\+/g, ' '));
      } catch {
        // a malformed escape: compared as sent
      }
      return !names.has(name);
    });
  return kept.length === 0 ? target.slice(0, q) : `${target.slice(0, q)}?${kept.join('&')}`;
}

/**
 * A Cookie header's value without the cookies named in `names` (every one of that name, as the mock
 * reads the first): the others stay exactly as sent. Undefined when none is left.
 */
export function withoutCookies(value: string, names: ReadonlySet<string>): string | undefined {
  if (names.size === 0) return value;
  const kept = value.split(';').filter((part) => {
    const eq = part.indexOf('=');
    return eq === -1 ? part.trim() !== '' : !names.has(part.slice(0, eq).trim());
  });
  const joined = kept.join(';').replace(/^[ \t]+/, '');
  return joined === '' ? undefined : joined;
}
