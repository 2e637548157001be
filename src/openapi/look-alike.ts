import { parse } from 'yaml';
import { basePath } from './operations.js';
import { deref, isObject, type Json, type JsonObject } from './json-pointer.js';

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
  if (scheme.in === 'header') return scheme.name.toLowerCase() === 'x-api-key' ? 'x-api-key' : `{ header: ${scheme.name} }`;
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
  const schemes = isObject(doc.components) && isObject(doc.components.securitySchemes) ? doc.components.securitySchemes : {};
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

/** The lines a new config starts with under `--look-alike` (none when the document gives neither). */
export function lookAlikeLines(doc: JsonObject): string[] {
  const lines: string[] = [];
  const base = basePath(doc);
  if (base !== '') lines.push('server:', `  basePath: ${JSON.stringify(base)}`);
  const accept = acceptOf(doc);
  if (accept.length > 0) lines.push('auth:', `  accept: [${accept.join(', ')}]`);
  return lines;
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
