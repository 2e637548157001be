import { parse as parseQueryString } from 'node:querystring';

// The parts of a request read beside its path and headers — the query string and the cookies — as
// auth (auth.accept), answers (request.query, request.cookies) and validation read them.

/** A percent-encoded component, decoded; as it is when it cannot be. */
export function decodeComponent(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Below this many `&`, a query string is far from querystring's 1000-pair cap. */
const PLAIN_PAIRS = 900;

/**
 * A query string's parameters, as node:querystring's `parse` reads them. A query with nothing to
 * decode (no `%`, no `+`), the usual case, is split here in one pass without querystring's
 * per-character decoding; any other goes to querystring itself.
 */
export function parseQuery(text: string): Record<string, string | string[]> {
  if (text.includes('%') || text.includes('+')) return parseQueryString(text) as Record<string, string | string[]>;
  const out = Object.create(null) as Record<string, string | string[]>;
  let start = 0;
  let pairs = 0;
  while (start <= text.length) {
    let amp = text.indexOf('&', start);
    if (amp === -1) amp = text.length;
    if (++pairs > PLAIN_PAIRS) return parseQueryString(text) as Record<string, string | string[]>;
    if (amp > start) {
      const eq = text.indexOf('=', start);
      const key = eq === -1 || eq > amp ? text.slice(start, amp) : text.slice(start, eq);
      const value = eq === -1 || eq > amp ? '' : text.slice(eq + 1, amp);
      const had = out[key];
      if (had === undefined) out[key] = value;
      else if (typeof had === 'string') out[key] = [had, value];
      else had.push(value);
    }
    start = amp + 1;
  }
  return out;
}

/** Cookies of a `Cookie` header by name (first value wins), decoded when they can be. */
export function parseCookies(header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = Object.create(null) as Record<string, string>;
  if (header === undefined) return cookies;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim();
    if (name === '' || Object.hasOwn(cookies, name)) continue;
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    cookies[name] = decodeComponent(value);
  }
  return cookies;
}
