/*
 * The `mockapi.session` entry of a W3C Baggage header (https://www.w3.org/TR/baggage/):
 * `baggage: userId=alice, mockapi.session=checkout-1;ttl=5, other=x`. An app that propagates
 * OpenTelemetry context passes the header on untouched, so a session named by a test reaches the
 * mock through the app. Read in one pass over the header without splitting it: a header of any size
 * costs time linear in its length and no memory but the value found (Node refuses a header block
 * over 16 KiB anyway, with 431).
 */

/** The baggage key that names a session. */
export const BAGGAGE_KEY = 'mockapi.session';

/** The longest value read: an id is at most 64 characters, percent-encoded at most three times that. */
const MAX_VALUE = 3 * 64;

/**
 * The value of the first `mockapi.session` member of `header` (percent-decoded), or undefined when
 * it has none. Members that are not `key=value` are skipped, as W3C asks of a receiver. A value that
 * cannot be decoded, or is too long to be an id, comes back as read so that its check refuses it.
 */
export function baggageSession(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string') {
    for (const one of header) {
      const found = baggageSession(one);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  // Only a header that holds the key is read member by member.
  if (!header.includes(BAGGAGE_KEY)) return undefined;
  let start = 0;
  while (start <= header.length) {
    let end = header.indexOf(',', start);
    if (end === -1) end = header.length;
    const value = memberValue(header, start, end);
    if (value !== undefined) return value;
    start = end + 1;
  }
  return undefined;
}

/** The value of the member `header[start, end)` when its key is {@link BAGGAGE_KEY}. */
function memberValue(header: string, start: number, end: number): string | undefined {
  while (start < end && isOws(header.charCodeAt(start))) start++;
  if (!header.startsWith(BAGGAGE_KEY, start)) return undefined;
  let at = start + BAGGAGE_KEY.length;
  while (at < end && isOws(header.charCodeAt(at))) at++;
  if (header.charCodeAt(at) !== 0x3d /* = */) return undefined;
  at++;
  // The value ends at the member's first property (`;`) or at its end.
  let stop = header.indexOf(';', at);
  if (stop === -1 || stop > end) stop = end;
  while (at < stop && isOws(header.charCodeAt(at))) at++;
  while (stop > at && isOws(header.charCodeAt(stop - 1))) stop--;
  // Longer than any id can be written: 65 of its characters, which no id check accepts.
  if (stop - at > MAX_VALUE) return header.slice(at, at + 65);
  const raw = header.slice(at, stop);
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

function isOws(code: number): boolean {
  return code === 0x20 || code === 0x09;
}
