import { randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 32 base62 characters ≈ 190 bits of entropy, well over the 128 the spec asks for. */
const KEY_LENGTH = 32;

/** The prefix of a key mockapi makes up itself. */
const DEFAULT_PREFIX = 'mk_';
/** A kept prefix is at most this long: past it, the "prefix" is most of a key, not a label. */
const MAX_PREFIX = 40;

/**
 * A fresh API key: `prefix` (default `mk_`) and 32 base62 characters from the OS CSPRNG. Never
 * contains `:` or whitespace when the prefix does not, so it is usable as a Basic-auth username.
 */
export function generateApiKey(prefix = DEFAULT_PREFIX): string {
  let key = prefix;
  for (let i = 0; i < KEY_LENGTH; i++) key += BASE62[randomInt(BASE62.length)];
  return key;
}

/**
 * The prefix a replacement of `key` keeps: everything up to and including its last `_`
 * (`sk_test_ci_4eC3…` → `sk_test_ci_`, `mk_…` → `mk_`), so a rotated key still looks like the
 * service's own. `mk_` for a key without `_`, or one whose prefix is not a short usable label.
 */
export function keyPrefixOf(key: string): string {
  const end = key.lastIndexOf('_');
  if (end < 1) return DEFAULT_PREFIX;
  const prefix = key.slice(0, end + 1);
  return prefix.length <= MAX_PREFIX && isUsableKey(prefix) ? prefix : DEFAULT_PREFIX;
}

/**
 * A key is usable when it is non-empty printable ASCII without spaces (no whitespace) and
 * without `:` (it is the Basic-auth username) — the same rule as the config schema's `apiKey`.
 */
export function isUsableKey(key: string): boolean {
  return /^[!-9;-~]+$/.test(key);
}
