import type { Entry } from './api.js';

/** Headers a client sets by itself, or that describe this exchange only: not repeated in the command. */
const SKIPPED = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'accept-encoding',
  'x-api-key',
  'authorization',
  'cookie',
  'proxy-authorization',
  'upgrade',
  'te',
]);

/** The credential as curl arguments: `$MOCKAPI_KEY` inside double quotes, so the shell expands it (and only it). */
const CREDENTIAL: Record<string, string> = {
  'x-api-key': '-H "X-API-Key: $MOCKAPI_KEY"',
  bearer: '-H "Authorization: Bearer $MOCKAPI_KEY"',
  basic: '-u "$MOCKAPI_KEY:"',
};

/**
 * The request as a cURL command for a POSIX shell. The key is never in it: the credential becomes
 * `$MOCKAPI_KEY` in double quotes (so the shell expands it), sent the way the request sent it.
 * Everything a client sent is in single quotes, so the shell expands and runs none of it, and `-g`
 * (`--globoff`) keeps curl from reading `[1-3]` or `{a,b}` in the URL as a list of URLs.
 */
export function curlOf(entry: Entry, origin: string): string {
  const parts = ['curl', '-g'];
  // curl squashes `/./` and `/../` unless told not to; the request sent them, so the copy does too.
  if (/(^|\/)\.\.?(\/|$)/.test(entry.path)) parts.push('--path-as-is');
  if (entry.method === 'HEAD') parts.push('-I');
  else if (entry.method !== 'GET' && !(entry.method === 'POST' && entry.body !== ''))
    parts.push('-X', word(entry.method));
  const { via, name } = entry.credential;
  const inQuery = via === 'query' && name !== undefined ? name : undefined;
  const url = quote(origin + entry.path + queryString(entry.query, inQuery));
  // A key sent in the query: the URL ends with `name=` and the shell appends the key, in double quotes.
  parts.push(inQuery === undefined ? url : `${url}"$MOCKAPI_KEY"`);
  const credential = credentialArgs(via, name);
  if (credential !== undefined) parts.push(credential);
  for (const [name, value] of Object.entries(entry.headers)) {
    if (SKIPPED.has(name.toLowerCase()) || value === '<redacted>') continue;
    // `-H 'name:'` would remove the header; `-H 'name;'` is curl's way to send it empty.
    parts.push('-H', quote(value === '' ? `${name};` : `${name}: ${value}`));
  }
  if (entry.body !== '') {
    // --data-raw makes curl send Content-Type: application/x-www-form-urlencoded unless one is
    // given: a request that sent none is replayed without one (`-H 'Content-Type:'` removes it).
    if (!Object.keys(entry.headers).some((name) => name.toLowerCase() === 'content-type'))
      parts.push('-H', quote('Content-Type:'));
    parts.push('--data-raw', quote(entry.body));
  }
  return parts.join(' ');
}

/** The credential as curl arguments, for the default places and those `auth.accept` adds (a query key goes in the URL). */
function credentialArgs(via: string, name: string | undefined): string | undefined {
  const fixed = CREDENTIAL[via];
  if (fixed !== undefined || name === undefined || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return fixed;
  if (via === 'header') return `-H "${name}: $MOCKAPI_KEY"`;
  if (via === 'scheme') return `-H "Authorization: ${name} $MOCKAPI_KEY"`;
  if (via === 'cookie') return `-b "${name}=$MOCKAPI_KEY"`;
  return undefined;
}

/** The query string; `keyName`, the parameter that carried the key, goes last with an empty value (the key follows). */
function queryString(query: Entry['query'], keyName?: string): string {
  const pairs: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (name === keyName) continue;
    for (const one of Array.isArray(value) ? value : [value])
      pairs.push(`${encodeURIComponent(name)}=${encodeURIComponent(one)}`);
  }
  if (keyName !== undefined) pairs.push(`${encodeURIComponent(keyName)}=`);
  return pairs.length === 0 ? '' : `?${pairs.join('&')}`;
}

/** Single-quotes text for a POSIX shell: `'` becomes `'\''`; nothing else is special inside. */
export function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A word the shell takes as it is (letters, digits, `-`, `_`, `.`) stays bare; anything else is quoted. */
function word(text: string): string {
  return /^[A-Za-z0-9._-]+$/.test(text) ? text : quote(text);
}

/** A request to try against the first endpoint, for the empty list: `:params` filled with examples. */
export function exampleCurl(
  origin: string,
  endpoint: { method: string; path: string } | undefined,
  basePath = '/mock',
  credential: { via: string; name?: string } = { via: 'x-api-key' },
): string {
  const path = (endpoint?.path ?? '/')
    .replace(/:[A-Za-z0-9_]+/g, (m) => (/id$/i.test(m) ? '42' : 'example'))
    .replace(/\*$/, 'anything');
  const method = endpoint?.method.toUpperCase() ?? 'GET';
  const flag = method === 'GET' ? '' : method === 'HEAD' ? ' -I' : ` -X ${word(method)}`;
  // Kept short for a first try: `-g` only where the path has characters curl would read as a glob.
  const glob = /[[\]{}]/.test(path) ? ' -g' : '';
  const base = basePath === '/' ? '' : basePath;
  const url = quote(`${origin}${base}${path === '/' && base !== '' ? '' : path}`);
  if (credential.via === 'query' && credential.name !== undefined)
    return `curl${glob}${flag} ${url.slice(0, -1)}?${encodeURIComponent(credential.name).replace(/'/g, '%27')}='"$MOCKAPI_KEY"`;
  return `curl${glob}${flag} ${credentialArgs(credential.via, credential.name) ?? '-H "X-API-Key: $MOCKAPI_KEY"'} ${url}`;
}
