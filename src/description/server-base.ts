import { isObject, type JsonObject } from './json-pointer.js';

/** The path of the first server URL, server variables at their defaults; `` without servers. */
export function basePath(doc: JsonObject): string {
  const server = Array.isArray(doc.servers) ? doc.servers[0] : undefined;
  if (!isObject(server) || typeof server.url !== 'string') return '';
  const variables = isObject(server.variables) ? server.variables : {};
  const url = server.url.replace(/\{([^}]*)\}/g, (_, name: string) => {
    const variable = variables[name];
    return isObject(variable) && variable.default !== undefined ? String(variable.default) : '';
  });
  let path: string;
  try {
    path = new URL(url, 'http://base.invalid/').pathname;
  } catch {
    return '';
  }
  try {
    path = decodeURI(path);
  } catch {
    // keep it encoded; the path check below reports the `%`
  }
  return path.replace(/\/+$/, '');
}
