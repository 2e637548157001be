import type { Entry } from './api.js';

/** Headers a client sets by itself, or that describe this exchange only: not repeated in the command. */
const SKIPPED = new Set(['host', 'content-length', 'connection', 'keep-alive', 'transfer-encoding', 'accept-encoding', 'x-api-key', 'authorization', 'cookie', 'proxy-authorization', 'upgrade', 'te']);

/**
 * The request as a cURL command for a shell. The key is never in it: the credential becomes
 * `$MOCKAPI_KEY` in double quotes (so the shell expands it), sent the way the request sent it.
 * Everything else is in single quotes, so nothing a client sent can run in the shell.
 */
export function curlOf(entry: Entry, origin: string): string {
  const parts = ['curl'];
  if (entry.method === 'HEAD') parts.push('-I');
  else if (entry.method !== 'GET' && !(entry.method === 'POST' && entry.body !== '')) parts.push('-X', entry.method);
  parts.push(quote(origin + entry.path + queryString(entry.query)));
  if (entry.credential.via === 'x-api-key') parts.push('-H "X-API-Key: $MOCKAPI_KEY"');
  else if (entry.credential.via === 'bearer') parts.push('-H "Authorization: Bearer $MOCKAPI_KEY"');
  else if (entry.credential.via === 'basic') parts.push('-u "$MOCKAPI_KEY:"');
  for (const [name, value] of Object.entries(entry.headers)) {
    if (SKIPPED.has(name) || value === '<redacted>') continue;
    parts.push('-H', quote(`${name}: ${value}`));
  }
  if (entry.body !== '') parts.push('--data-raw', quote(entry.body));
  return parts.join(' ');
}

function queryString(query: Entry['query']): string {
  const pairs: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    for (const one of Array.isArray(value) ? value : [value]) pairs.push(`${encodeURIComponent(name)}=${encodeURIComponent(one)}`);
  }
  return pairs.length === 0 ? '' : `?${pairs.join('&')}`;
}

/** Single-quotes text for a POSIX shell: `'` becomes `'\''`. */
export function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A request to try against the first endpoint, for the empty list: `:params` filled with examples. */
export function exampleCurl(origin: string, endpoint: { method: string; path: string } | undefined): string {
  const path = (endpoint?.path ?? '/').replace(/:[A-Za-z0-9_]+/g, (m) => (/id$/i.test(m) ? '42' : 'example')).replace(/\*$/, 'anything');
  const method = endpoint?.method.toUpperCase() ?? 'GET';
  const flag = method === 'GET' ? '' : method === 'HEAD' ? ' -I' : ` -X ${method}`;
  return `curl${flag} -H "X-API-Key: $MOCKAPI_KEY" ${quote(`${origin}/mock${path === '/' ? '' : path}`)}`;
}
