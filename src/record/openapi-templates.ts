import { resolve } from 'node:path';
import { basePath } from '../description/server-base.js';
import { readDescription } from '../description/read-description.js';
import { openApiTemplate } from './templates.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

/** The route templates of an OpenAPI description (`--openapi`), under its first server's path. */
export async function openApiTemplates(
  spec: string,
): Promise<{ ok: true; templates: Array<{ method: string; path: string }> } | { ok: false; message: string }> {
  const read = await readDescription(resolve(spec));
  if (!read.ok) return { ok: false, message: read.message };
  const base = basePath(read.doc).replace(/\/+$/, '');
  const paths = read.doc.paths;
  const templates: Array<{ method: string; path: string }> = [];
  if (paths !== null && typeof paths === 'object' && !Array.isArray(paths)) {
    for (const [path, item] of Object.entries(paths)) {
      if (item === null || typeof item !== 'object') continue;
      for (const method of METHODS)
        if (Object.hasOwn(item, method))
          templates.push({ method: method.toUpperCase(), path: openApiTemplate(base + path) });
    }
  }
  return { ok: true, templates };
}
