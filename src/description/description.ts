import { createHash } from 'node:crypto';
import { fileStamp } from '../file-stamp.js';
import { routeShape } from '../route-path.js';
import { readDescription } from './read-description.js';

export { entryProblem } from './read-description.js';
import { basePath } from './server-base.js';
import { isObject, type JsonObject } from './json-pointer.js';
import { encodeToken, locate } from './pointers.js';

/**
 * The operations of an OpenAPI description, as request validation finds them: by the endpoint's
 * `openapi:` marker (`POST /v1/charges`), else by its method and path.
 */

const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

/** One operation of the description. */
export interface Operation {
  /** `POST /v1/charges`, as the description writes it. */
  key: string;
  /** Its path item's and its own parameters (an operation's own one replaces the path item's of the same name and place). */
  parameters: Parameter[];
  requestBody: JsonObject | undefined;
  /** Canonical pointers of the operation and of its request body (see pointers.ts). */
  pointer: string;
  requestBodyPointer: string | undefined;
  responses: JsonObject;
  /** Matches a request path (with the server's base path, without `/mock`); the groups are the path parameters, in `pathNames` order. */
  pathPattern: RegExp;
  pathNames: string[];
}

/** A description read for validation. */
export interface Description {
  doc: JsonObject;
  /** `3.0` or `3.1`. */
  version: '3.0' | '3.1';
  /** sha256 of the bundled description: compiled schemas are kept per hash. */
  hash: string;
  operations: Map<string, Operation>;
  /** `GET /users/:` (see routeShape) → the operation key. */
  byRoute: Map<string, string>;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A parameter of an operation and its canonical pointer. */
export interface Parameter {
  param: JsonObject;
  pointer: string;
}

function parametersOf(doc: JsonObject, itemPointer: string, operationPointer: string): Parameter[] {
  const byPlace = new Map<string, Parameter>();
  for (const owner of [itemPointer, operationPointer]) {
    const list = locate(doc, `${owner}/parameters`);
    if (list === undefined || !Array.isArray(list.node)) continue;
    list.node.forEach((_, i) => {
      const found = locate(doc, `${list.pointer}/${i}`);
      const param = found?.node;
      if (found === undefined || !isObject(param) || typeof param.name !== 'string' || typeof param.in !== 'string')
        return;
      byPlace.set(`${param.in} ${param.in === 'header' ? param.name.toLowerCase() : param.name}`, {
        param,
        pointer: found.pointer,
      });
    });
  }
  return [...byPlace.values()];
}

/**
 * The operations of a bundled description. `digest` names its content (the reader's digest of the
 * files read); without it the description's JSON text is hashed.
 */
export function indexOperations(doc: JsonObject, version: string, digest?: string): Description {
  const base = basePath(doc);
  const operations = new Map<string, Operation>();
  const byRoute = new Map<string, string>();
  const paths = isObject(doc.paths) ? doc.paths : {};
  for (const template of Object.keys(paths)) {
    const itemAt = locate(doc, `/paths/${encodeToken(template)}`);
    const item = itemAt?.node;
    if (itemAt === undefined || !isObject(item) || !template.startsWith('/')) continue;
    const pathNames: string[] = [];
    const pattern = (base + template).split(/(\{[^{}]+\})/).map((part) => {
      const name = /^\{([^{}]+)\}$/.exec(part)?.[1];
      if (name === undefined) return escapeRegExp(part);
      pathNames.push(name);
      return '([^/]+)';
    });
    const pathPattern = new RegExp(`^${pattern.join('')}/?$`);
    const route = (base + template).replace(/\{([^{}]+)\}/g, ':p') || '/';
    for (const method of OPERATION_METHODS) {
      if (item[method] === undefined) continue;
      const operationAt = locate(doc, `${itemAt.pointer}/${method}`);
      const operation = operationAt?.node;
      if (operationAt === undefined || !isObject(operation)) continue;
      const key = `${method.toUpperCase()} ${template}`;
      const body = operation.requestBody === undefined ? undefined : locate(doc, `${operationAt.pointer}/requestBody`);
      operations.set(key, {
        key,
        parameters: parametersOf(doc, itemAt.pointer, operationAt.pointer),
        requestBody: body !== undefined && isObject(body.node) ? body.node : undefined,
        pointer: operationAt.pointer,
        requestBodyPointer: body !== undefined && isObject(body.node) ? body.pointer : undefined,
        responses: isObject(operation.responses) ? operation.responses : {},
        pathPattern,
        pathNames,
      });
      const shape = `${method.toUpperCase()} ${routeShape(route)}`;
      if (!byRoute.has(shape)) byRoute.set(shape, key);
    }
  }
  const hash = digest ?? createHash('sha256').update(JSON.stringify(doc)).digest('hex');
  return { doc, version: version.startsWith('3.1') ? '3.1' : '3.0', hash, operations, byRoute };
}

/** The operation an endpoint validates against: its marker's, else its method and path's; undefined when none. */
export function operationFor(
  description: Description,
  method: string,
  path: string,
  marker: string | undefined,
): Operation | undefined {
  if (marker !== undefined) return description.operations.get(normalizeMarker(marker));
  const key = description.byRoute.get(`${method} ${routeShape(path)}`);
  return key === undefined ? undefined : description.operations.get(key);
}

/** `post /v1/charges` → `POST /v1/charges`. */
export function normalizeMarker(marker: string): string {
  const [method = '', ...rest] = marker.trim().split(/\s+/);
  return `${method.toUpperCase()} ${rest.join(' ')}`;
}

type Loaded = { ok: true; description: Description } | { ok: false; message: string };

/** The last description read, by file, with the size and time of the file it was read from. */
const lastRead = new Map<string, { stamp: string; result: Promise<Loaded> }>();

/**
 * Reads `file` (through the guarded description reader) and indexes it; never throws. The config
 * check and the compile of the same load share one read: it is read again once the file changed.
 */
export async function loadDescription(file: string): Promise<Loaded> {
  const stamp = await fileStamp(file);
  const known = lastRead.get(file);
  if (known !== undefined && stamp !== '' && known.stamp === stamp) return known.result;
  const result = readDescription(file).then((read): Loaded =>
    read.ok ? { ok: true, description: indexOperations(read.doc, read.version, read.digest) } : read,
  );
  lastRead.set(file, { stamp, result });
  return result;
}
