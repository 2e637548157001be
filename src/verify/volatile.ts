import { segmentShape } from '../record/templates.js';

/**
 * What a comparison reads as data rather than shape. Values are never compared, except enum-like
 * strings; this decides which strings those are, and which map keys are ids.
 */

/** A time in text: ISO dates and times, and RFC 1123 dates. */
const TIME = /^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$|^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} /;

/**
 * Whether an object key is data (an id, a date, a hash, a number) rather than a field name: the
 * keys of such a map are folded into one `*`, so two answers with different ids have one shape.
 * The id shapes are those a recording reads in a path (numbers, UUIDs, prefixed ids, long hex and
 * opaque ids, dates).
 */
export function isVolatileKey(key: string): boolean {
  return remembered(volatileKeys, key, () => segmentShape(key) !== undefined || TIME.test(key));
}

/** Answers already worked out, by key (the same field names come back in every body); bounded. */
const volatileKeys = new Map<string, boolean>();
const enumFields = new Map<string, boolean>();
const REMEMBERED = 10_000;

function remembered(cache: Map<string, boolean>, key: string, work: () => boolean): boolean {
  let known = cache.get(key);
  if (known === undefined) {
    known = work();
    if (cache.size >= REMEMBERED) cache.clear();
    cache.set(key, known);
  }
  return known;
}

/**
 * Identifier-like words of letters: lower case (`active`, `past_due`, `in-progress`,
 * `checkout.session.completed`) or upper case (`USD`, `ACTIVE`), at most 40 characters. Mixed
 * case (`Ada`, `iPhone`) and anything with a space reads as text; anything with a digit (`sku-1`,
 * `v2`) as data — ids and codes carry digits far more often than an enumeration's values do.
 */
const TOKEN = /^(?:[a-z]+(?:[_.-][a-z]+)*|[A-Z]+(?:[_.-][A-Z]+)*)$/;

/** Field names whose strings are names, text, ids, addresses or hashes: never enum-like. */
const NOT_ENUM_FIELD =
  /(^|_|-)(id|ids|uuid|guid|key|name|names|title|description|desc|text|message|msg|summary|comment|note|notes|label|email|phone|url|uri|href|link|path|slug|login|username|user|handle|hash|sha|digest|checksum|etag|signature|token|secret|password|cursor|after|before|next|prev|previous|version|created|updated|at|date|time|timestamp|ip|host|domain|address|city|street|zip|postcode)$/i;
/** The same in camelCase: `customerId`, `displayName`, `createdAt`. */
const NOT_ENUM_CAMEL = /[a-z0-9](Id|Ids|Name|Url|Uri|At|Key|Hash|Date|Time|Token)$/;

/** The longest enum-like string. */
const MAX_TOKEN = 40;

/** Whether a string value could be one of an enumeration's values (see {@link TOKEN}); ids, hashes and times are not. */
export function isTokenValue(value: string): boolean {
  return value.length <= MAX_TOKEN && TOKEN.test(value) && segmentShape(value) === undefined && !TIME.test(value);
}

/** Whether strings under this field name may be enum-like (`status`, `type`, `currency`…; not `name`, `id`, `email`…). */
export function isEnumField(name: string | undefined): boolean {
  return (
    name === undefined || remembered(enumFields, name, () => !(NOT_ENUM_FIELD.test(name) || NOT_ENUM_CAMEL.test(name)))
  );
}

/** At most this many distinct values per path and side: more reads as data, not an enumeration. */
export const MAX_ENUM_VALUES = 20;

/** From this many strings at one path (items of lists), all of them different reads as data (one name each), not an enumeration. */
export const MIN_REPEATS_SEEN = 6;

/** Whether the strings seen at a path (`count` of them, `distinct` different) may be an enumeration's values. */
export function looksEnumerated(count: number, distinct: number): boolean {
  return distinct > 0 && !(count >= MIN_REPEATS_SEEN && distinct === count);
}
