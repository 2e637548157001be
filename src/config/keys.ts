import { randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 32 base62 characters ≈ 190 bits of entropy, well over the 128 the spec asks for. */
const KEY_LENGTH = 32;

/**
 * A fresh API key: `mk_` and 32 base62 characters from the OS CSPRNG. Never contains `:` or
 * whitespace, so it is always usable as a Basic-auth username.
 */
export function generateApiKey(): string {
  let key = 'mk_';
  for (let i = 0; i < KEY_LENGTH; i++) key += BASE62[randomInt(BASE62.length)];
  return key;
}

/**
 * A key is usable when it is non-empty printable ASCII without spaces (no whitespace) and
 * without `:` (it is the Basic-auth username) — the same rule as the config schema's `apiKey`.
 */
export function isUsableKey(key: string): boolean {
  return /^[!-9;-~]+$/.test(key);
}
