import { parse } from 'yaml';
import { basePath } from '../description/server-base.js';
import { deref, isObject, type Json, type JsonObject } from '../description/json-pointer.js';

/**
 * The shape of the API an OpenAPI description documents, for `mockapi import --look-alike`: the
 * first server URL's path becomes `server.basePath` (endpoints then keep the document's own paths)
 * and the security schemes the document uses become `auth.accept`.
 */

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** One `auth.accept` item as YAML flow text, or undefined for a scheme mockapi cannot read a key from. */
function acceptItem(scheme: JsonObject): string | undefined {
  const type = typeof scheme.type === 'string' ? scheme.type.toLowerCase() : '';
  if (type === 'http') {
    const word = typeof scheme.scheme === 'string' ? scheme.scheme.toLowerCase() : '';
    return word === 'bearer' ? 'bearer' : word === 'basic' ? 'basic' : undefined;
  }
  if (type !== 'apikey' || typeof scheme.name !== 'string' || !HEADER_NAME.test(scheme.name)) return undefined;
  if (scheme.in === 'header')
    return scheme.name.toLowerCase() === 'x-api-key' ? 'x-api-key' : `{ header: ${scheme.name} }`;
  if (scheme.in === 'query') return `{ query: ${scheme.name} }`;
  if (scheme.in === 'cookie') return `{ cookie: ${scheme.name} }`;
  return undefined;
}

/** The names of the schemes in a `security` list, in order. */
function schemeNames(security: Json | undefined): string[] {
  if (!Array.isArray(security)) return [];
  return security.flatMap((requirement) => (isObject(requirement) ? Object.keys(requirement) : []));
}

/** `auth.accept` items for the schemes the document uses (top-level and per operation), in order of first use. */
export function acceptOf(doc: JsonObject): string[] {
  const schemes =
    isObject(doc.components) && isObject(doc.components.securitySchemes) ? doc.components.securitySchemes : {};
  const names = schemeNames(doc.security);
  for (const rawItem of Object.values(isObject(doc.paths) ? doc.paths : {})) {
    const item = deref(doc, rawItem);
    if (!isObject(item)) continue;
    for (const value of Object.values(item)) {
      const operation = deref(doc, value);
      if (isObject(operation)) names.push(...schemeNames(operation.security));
    }
  }
  const items: string[] = [];
  for (const name of names) {
    const scheme = deref(doc, schemes[name]);
    const item = isObject(scheme) ? acceptItem(scheme) : undefined;
    if (item !== undefined && !items.includes(item)) items.push(item);
  }
  return items;
}

/**
 * What `auth.accept` becomes when the document declares no security scheme mockapi can read a key
 * from (none at all, as GitHub's, or only OAuth 2 / OpenID Connect): the two ways API clients most
 * often send a key in `Authorization` — `Bearer <key>` and `token <key>` (Octokit's default).
 */
export const COMMON_ACCEPT = ['bearer', '{ scheme: token }'];

/** What `--look-alike` writes at the top of a new config, and the notes the import summary adds about it. */
export interface LookAlikeShape {
  lines: string[];
  notes: string[];
}

/**
 * The lines a new config starts with under `--look-alike`: `server.basePath` is the first server
 * URL's path, `/` when it has none (`https://api.github.com`) or the document lists no server;
 * `auth.accept` the schemes the document uses, else {@link COMMON_ACCEPT} (said in `notes`).
 */
export function lookAlikeShape(doc: JsonObject, spec: string): LookAlikeShape {
  const base = basePath(doc);
  const lines = ['server:', `  basePath: ${JSON.stringify(base === '' ? '/' : base)}`];
  const notes: string[] = [];
  let accept = acceptOf(doc);
  if (accept.length === 0) {
    accept = COMMON_ACCEPT;
    notes.push(
      `  ${spec} declares no security scheme mockapi can read a key from: auth.accept is [${accept.join(', ')}] (Authorization: Bearer <key> or Authorization: token <key>); edit it to accept others`,
    );
  }
  lines.push('auth:', `  accept: [${accept.join(', ')}]`);
  return { lines, notes };
}

/** `server.basePath` of an existing config's text, trailing `/` removed; undefined when it sets none (or cannot be read). */
export function configBasePath(source: string | undefined): string | undefined {
  if (source === undefined) return undefined;
  try {
    const data = parse(source) as unknown;
    const server = isObject(data as Json) ? (data as JsonObject).server : undefined;
    return isObject(server) && typeof server.basePath === 'string' ? server.basePath.replace(/\/+$/, '') : undefined;
  } catch {
    return undefined;
  }
}

/** Whether endpoints keep the document's own paths: the config is (or will be) served under the first server URL's path. */
export function keepsDocumentPaths(doc: JsonObject, source: string | undefined, lookAlike: boolean): boolean {
  const base = basePath(doc);
  if (base === '') return false;
  if (source === undefined) return lookAlike;
  return configBasePath(source) === base;
}
