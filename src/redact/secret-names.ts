/**
 * The one list of names that mark a secret: a JSON or YAML field, a header, a query parameter
 * whose name says it holds a credential. Recording redacts what such a name holds and its final
 * scan refuses to write one in clear; the verify command reads the same list.
 */

/** Names whose text values are secrets whatever they hold (any case; `_`, `-` or nothing between words). */
const SECRET_NAME = new RegExp(
  [
    'pass(?:word|wd|phrase|code)?$',
    '^pwd$',
    'secret',
    'token',
    'api[_-]?key',
    '(?:access|secret|private|signing|client|master|encryption|session)[_-]?key',
    '^key$',
    'auth(?:orization)?$',
    'auth[_-]?code',
    'bearer',
    'cookie',
    'signature',
    '^sig$',
    'credential',
    'session[_-]?id',
    '^sid$',
    '^otp$',
    '^pin$',
    '^cvc$',
    '^cvv$',
  ].join('|'),
  'i',
);

/** Names whose numbers are secrets too (a PIN, a passcode); elsewhere numbers such as `tokens_used` stay. */
const NUMERIC_SECRET_NAME = /pass(?:word|wd|code)?$|^pwd$|^pin$|^cvc$|^cvv$|^otp$|auth[_-]?code/i;

/** Whether a field, header or query parameter of this name holds a secret. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** Whether a number under this name is a secret too. */
export function isNumericSecretName(name: string): boolean {
  return NUMERIC_SECRET_NAME.test(name);
}
